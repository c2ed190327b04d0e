#include "core/engine/engine_core.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "core/attention/attention_factory.h"
#include "core/common/text_format.h"
#include "core/engine/failure_of.h"
#include "core/engine/prompt.h"
#include "core/model/device_failure.h"
#include "core/model/llama_model.h"
#include "core/sched/model_executor.h"
#include "core/spec/proposer_factory.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {
namespace {

std::unique_ptr<KvCache> build_cache(const LlamaModel& model, const EngineConfig& c, const KvConfig& kv) {
  return make_kv_cache(model.kv_geometry(c.kv_dtype), kv);
}

// The weights at the config's level, converted now (a view of the model's own at native).
std::unique_ptr<ConvertedWeights> convert_now(const LlamaModel& model, const EngineConfig& c,
                                              const ConversionProgressFn& progress) {
  ThreadPool pool(c.threads);
  return ConvertedWeights::convert(model, c.quant, pool, ConversionControl{progress});
}

// A dry run runs no forward pass, so it has no device to run one on.
void check_dry_run_device(const EngineCoreOptions& options, const ComputeDevice& device) {
  if (options.dry_run && device.cuda) {
    throw std::invalid_argument("--device " + compute_device_name(device) +
                                ": a dry run models its steps and runs no forward pass on any device");
  }
}

// An early-exit draft runs the target's first layers on the CPU over the target's cache, whose K/V
// live on the GPU when the target runs there.
void check_spec_device(const SpecConfig& spec, const ComputeDevice& device) {
  if (device.cuda && spec.mode == SpecMode::EarlyExit) {
    throw std::invalid_argument("--spec early-exit is not supported with --device " + compute_device_name(device) +
                                " (the draft would read K/V that live on the GPU)");
  }
}

std::unique_ptr<StepExecutor> build_executor(const LlamaModel& model, KvCache& kv, const EngineConfig& c,
                                             const EngineCoreOptions& options, const ConvertedWeights& weights,
                                             const LogitsFn& on_logits) {
  check_dry_run_device(options, c.device);
  if (options.dry_run) {
    // a roofline device prices each step by what it reads and computes at the weights' level
    const StepCostModel cost(model.config(), weights.weights(), kv.geometry().bytes_per_token());
    const StepDemandFn demand = [cost](const StepPlan& plan) {
      const StepCost step = cost.step(plan, {});
      return StepDemand{step.flops(), step.bytes()};
    };
    return std::make_unique<DryRunExecutor>(*options.dry_run, model.config().vocab_size, demand);
  }
  ModelExecutorOptions o;
  o.threads = c.threads;
  o.matmul = c.matmul;
  o.device = c.device;
  o.attention = c.attention;
  o.weights = &weights.weights();
  o.on_logits = on_logits;
  o.forward_maker = options.forward_maker;
  return std::make_unique<ModelExecutor>(model, kv, o);
}

std::vector<TokenId> encode_request(const LlamaModel& model, const EngineRequest& r) {
  if (!r.messages.empty()) return encode_chat(model, r.messages);
  if (r.prompt_tokens.empty()) return encode_prompt(model, r.prompt);
  const int32_t vocab = model.config().vocab_size;
  for (TokenId id : r.prompt_tokens) {
    if (id < 0 || id >= vocab) {
      throw std::invalid_argument("prompt token " + std::to_string(id) + " is outside the vocabulary (0.." +
                                  std::to_string(vocab - 1) + ")");
    }
  }
  return r.prompt_tokens;
}

}  // namespace

EngineCore::EngineCore(const LlamaModel& model, EngineConfig config, EngineCallbacks callbacks,
                       EngineCoreOptions options)
    : model_(model),
      callbacks_(std::move(callbacks)),
      options_(options),
      clock_(options.dry_run.has_value()),
      config_(resolve_config(config, model)),
      weights_(convert_now(model, config_, options_.conversion_progress)),
      metrics_(options.step_window, options.finished_window) {
  SpecSetup spec = build_spec(config_, config.kv.budget_bytes == 0, weights_->weights());
  target_kv_ = spec.target_kv;
  kv_ = build_cache(model, config_, target_kv_);
  limit_ = request_limit(*kv_, config_.kv, config_.context_length);
  executor_ = build_executor(model, *kv_, config_, options_, *weights_, callbacks_.on_logits);
  use_proposer(std::move(spec.proposer));
  scheduler_ = std::make_unique<Scheduler>(*kv_, limit_, config_.scheduler);
  publish_weights();
  publish_device("");
}

EngineCore::SpecSetup EngineCore::build_spec(EngineConfig& c, bool default_budget,
                                             const LlamaWeights& target_weights) const {
  if (options_.dry_run && c.spec.enabled()) {
    throw std::invalid_argument("speculative decoding needs the model's forward pass, which a dry run does not run");
  }
  validate_spec(c.spec, model_.config().n_layers);
  check_spec_device(c.spec, c.device);
  SpecSetup setup{nullptr, c.kv};
  DraftModel draft = load_draft_model(c.spec, model_, target_weights, c.kv_dtype, c.threads);
  KvConfig draft_kv = c.kv;
  if (draft.model) {
    // One budget for both caches, shared so that they hold the same number of tokens.
    if (default_budget) c.kv.budget_bytes += kv_budget_for_sequences(draft.geometry, c.kv, c.budget_sequences);
    setup.target_kv.budget_bytes = target_kv_share(c.kv.budget_bytes, model_.kv_geometry(c.kv_dtype).bytes_per_token(),
                                                   draft.geometry.bytes_per_token());
    draft_kv.budget_bytes = c.kv.budget_bytes - setup.target_kv.budget_bytes;
  }
  setup.proposer = make_proposer(c.spec, model_, target_weights, std::move(draft), draft_kv, c.matmul);
  return setup;
}

void EngineCore::use_proposer(std::unique_ptr<Proposer> proposer) {
  executor_->set_proposer(proposer.get());
  proposer_ = std::move(proposer);  // the old one goes only once the executor no longer points at it
  metrics_.set_spec_mode(std::string(spec_mode_name(config_.spec.mode)));
  restart_draft_lengths();
}

void EngineCore::restart_draft_lengths() {
  draft_lengths_.reset();
  if (proposer_ && config_.spec.auto_k()) draft_lengths_.emplace(config_.spec.max_k(), proposer_->drafts_cost_nothing());
}

double EngineCore::choose_draft_lengths() {
  const NextDecodes next = scheduler_->next_decodes();
  if (next.speculating.empty()) return -1;
  // A fixed k: every decode may draft all of it (whatever auto chose before a switch).
  const std::vector<int32_t> k = draft_lengths_ ? draft_lengths_->choose(next.speculating, next.count)
                                                : std::vector<int32_t>(next.speculating.size(), config_.spec.max_k());
  double sum = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    scheduler_->set_max_drafts(next.speculating[i], k[i]);
    sum += k[i];
  }
  return sum / static_cast<double>(k.size());
}

void EngineCore::learn_draft_lengths(const StepPlan& plan, double seconds) {
  if (!draft_lengths_) return;
  int32_t drafted = 0;
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const SampledToken& s = sampled_[i];
    drafted += s.drafted;
    if (!plan.seqs[i].sample || !s.error.empty()) continue;
    if (s.drafted > 0) {
      draft_lengths_->on_verified(plan.seqs[i].id, s.drafted, s.verification.accepted);
    } else if (s.shadow >= 0 && !s.tokens.empty()) {
      draft_lengths_->on_shadow(plan.seqs[i].id, s.tokens.front() == s.shadow);
    }
  }
  if (plan.prefill_tokens() == 0) draft_lengths_->on_decode_step(plan.new_tokens() + drafted, seconds);
}

EngineCore::~EngineCore() = default;

// A config ready to apply, with everything that can fail already done.
struct EngineCore::PreparedConfig {
  EngineConfig config;  // resolved; quant stays the level in use (new weights set it when installed)
  std::string change;   // what changed, from describe_change
  bool new_settings_cache = false;  // the KV settings changed
  std::optional<SpecSetup> spec;    // a new proposer (spec or KV settings changed)
  std::unique_ptr<KvCache> kv;      // a new cache, for new settings, weights or device
  std::unique_ptr<ForwardPass> forward;  // built on a new device (its cache is kv)
  KvConfig target_kv;               // what kv is built with
  RequestLimit limit;               // with kv
  bool cancel_conversion = false;   // a conversion in flight is to another level
  std::unique_ptr<ConvertedWeights> weights;  // converted at once: installed with kv
  std::optional<WeightQuant> convert_in_background;
};

void EngineCore::apply_config(const EngineConfig& requested) {
  std::string note;
  try {
    PreparedConfig prepared = prepare_config(requested);
    scheduler_->set_config(prepared.config.scheduler);  // its own check: nothing has changed before it
    note = commit_config(std::move(prepared));
  } catch (const std::exception& e) {
    return report_config(false, std::string("config rejected: ") + e.what());
  }
  report_config(true, note);
}

EngineCore::PreparedConfig EngineCore::prepare_config(const EngineConfig& requested) const {
  PreparedConfig p;
  EngineConfig next = requested;
  next.threads = config_.threads;  // fixed at construction
  next.matmul = config_.matmul;
  p.config = resolve_config(next, model_);
  p.change = describe_change(config_, p.config);
  make_attention(p.config.attention);  // validates the name
  const WeightQuant level = p.config.quant;
  p.config.quant = config_.quant;
  const bool already_converting = conversion_ && conversion_->level() == level;
  p.cancel_conversion = conversion_ && !already_converting;
  if (level != config_.quant && !already_converting) {
    if (level == WeightQuant::Native || options_.dry_run) {
      // Native is a view of the model's own weights (nothing to compute). A dry run converts here, at
      // once: its steps never read the weights, but the metrics report the level's bytes.
      ThreadPool pool(1);
      if (options_.test_fault) options_.test_fault("convert weights");
      p.weights = ConvertedWeights::convert(model_, level, pool);
    } else {
      p.convert_in_background = level;
    }
  }
  p.new_settings_cache = needs_new_cache(config_, p.config);
  // A new spec, or a new budget that a draft cache may share: a new proposer.
  p.target_kv = target_kv_;
  if (p.new_settings_cache || !(p.config.spec == config_.spec)) {
    p.spec = build_spec(p.config, requested.kv.budget_bytes == 0, weights_->weights());
    p.target_kv = p.spec->target_kv;
  }
  // Another device: its forward pass built now, over the weights it will run, so a device that cannot
  // run them refuses the whole config with the factory's reason.
  if (p.config.device != config_.device) {
    check_dry_run_device(options_, p.config.device);
    check_spec_device(p.config.spec, p.config.device);
    p.forward = options_.forward_maker(model_, p.weights ? p.weights->weights() : weights_->weights(),
                                       config_.matmul, p.config.device);
  }
  // New weights or a new device make the cached K/V stale as well (a device keeps K/V where it
  // computes them): one new cache serves all.
  if (p.new_settings_cache || p.weights || p.forward) {
    p.kv = build_cache(model_, p.config, p.target_kv);
    p.limit = request_limit(*p.kv, p.config.kv, p.config.context_length);
  }
  return p;
}

std::string EngineCore::commit_config(PreparedConfig p) {
  const size_t old_bytes = weights_->weight_bytes();
  std::string note = p.change;
  CacheSwap swap;
  if (p.kv) {
    swap = swap_cache(std::move(p.kv), std::move(p.limit));
    target_kv_ = p.target_kv;
  }
  if (p.new_settings_cache) {
    note += ": new KV cache; " + std::to_string(swap.preempted) +
            " running requests preempted (recomputed on the new cache)";
    if (!swap.refused.empty()) note += ", " + std::to_string(swap.refused.size()) + " no longer fit and failed";
  }
  const bool new_device = p.forward != nullptr;
  if (new_device) {
    executor_->set_forward(std::move(p.forward), p.config.device);
    if (!p.new_settings_cache) {
      note += ": new KV cache; " + std::to_string(swap.preempted) + " running requests recomputed on " +
              compute_device_name(p.config.device);
    }
  }
  executor_->set_attention(p.config.attention);
  config_ = p.config;
  restart_draft_lengths();  // a new cache, device or attention: the steps cost what they cost now
  if (new_device) publish_device("");
  if (p.spec) use_proposer(std::move(p.spec->proposer));
  if (p.cancel_conversion) {
    conversion_.reset();  // cancels it and waits for its worker
    metrics_.set_conversion("", 0);
  }
  std::string weights_change;
  if (p.weights) {
    use_weights(std::move(p.weights));
    weights_change = weights_note(old_bytes, swap.preempted);
  } else if (p.convert_in_background) {
    const std::string name(weight_quant_name(*p.convert_in_background));
    conversion_ = std::make_unique<BackgroundConversion>(
        model_, *p.convert_in_background, config_.threads,
        [this, name](double fraction, const std::string&) { metrics_.set_conversion(name, fraction); }, options_.wake);
    weights_change = "converting the weights to " + name + " in the background; requests go on with " +
                     std::string(weight_quant_name(config_.quant)) + " until it is done";
  } else if (p.cancel_conversion) {
    weights_change = "weight conversion cancelled; staying on " + std::string(weight_quant_name(config_.quant));
  }
  if (!weights_change.empty()) note = (note == "no change" ? "" : note + "; ") + weights_change;
  // Last, so their callbacks see the engine in its new state.
  for (RequestId id : swap.refused) end(id, StopReason::Failed, scheduler_->request(id).refusal);
  return note;
}

EngineCore::CacheSwap EngineCore::swap_cache(std::unique_ptr<KvCache> kv, RequestLimit limit) {
  CacheSwap swap;
  // The running requests keep their tokens and are recomputed on the new cache.
  swap.preempted = scheduler_->preempt_all().size();
  metrics_.on_preempted(static_cast<int64_t>(swap.preempted));
  limit_ = std::move(limit);
  swap.refused = scheduler_->rebind(*kv, limit_);
  executor_->rebind(*kv);
  kv_ = std::move(kv);
  return swap;
}

void EngineCore::use_weights(std::unique_ptr<ConvertedWeights> weights) {
  executor_->set_weights(weights->weights());
  // An early-exit draft runs the target's own layers: the new ones, from now on.
  if (config_.spec.mode == SpecMode::EarlyExit) {
    use_proposer(make_proposer(config_.spec, model_, weights->weights(), DraftModel{}, target_kv_, config_.matmul));
  }
  weights_ = std::move(weights);
  config_.quant = weights_->level();
  restart_draft_lengths();
  publish_weights();
}

std::string EngineCore::weights_note(size_t old_bytes, size_t preempted) const {
  std::string note = "weights now " + std::string(weight_quant_name(config_.quant)) + ": " +
                     format_mib(weights_->weight_bytes()) + " (was " + format_mib(old_bytes) + "); new KV cache, " +
                     std::to_string(preempted) + " running requests recomputed with the new weights";
  const std::string fallbacks = fallback_summary(weights_->fallbacks());
  if (!fallbacks.empty()) note += "; rows not whole blocks: " + fallbacks;
  return note;
}

std::string EngineCore::install_weights(std::unique_ptr<ConvertedWeights> weights) {
  const size_t old_bytes = weights_->weight_bytes();
  // Cached K/V were computed by the old weights: a new cache (built before anything changes), and
  // running requests recomputed on it. The limit stays, so no request is refused.
  const CacheSwap swap = swap_cache(build_cache(model_, config_, target_kv_), limit_);
  use_weights(std::move(weights));
  return weights_note(old_bytes, swap.preempted);
}

void EngineCore::finish_conversion() {
  std::unique_ptr<BackgroundConversion> done = std::move(conversion_);
  metrics_.set_conversion("", 0);
  std::string note;
  bool applied = true;
  try {
    note = install_weights(done->take());
  } catch (const std::exception& e) {
    applied = false;
    note = "converting the weights to " + std::string(weight_quant_name(done->level())) + " failed: " + e.what();
  }
  report_config(applied, note);
}

void EngineCore::fall_back_to_cpu(const std::string& failure) {
  const std::string from = compute_device_name(config_.device);
  // The quant switch's path onto the CPU: what is in use now stays (a conversion in flight goes on).
  EngineConfig cpu = config_;
  cpu.device = ComputeDevice{};
  if (conversion_) cpu.quant = conversion_->level();
  std::string note;
  if (const auto failed = failure_of([&] { note = commit_config(prepare_config(cpu)); })) {
    return report_config(false, "device " + from + " failed (" + failure + "); moving to the CPU failed too: " + *failed);
  }
  publish_device("fell back from " + from + " after: " + failure);
  report_config(true, "device " + from + " failed (" + failure + "): " + note);
}

void EngineCore::report_config(bool applied, const std::string& note) const {
  // Concerns no request: what the callback throws has nothing to fail, and goes no further.
  if (callbacks_.on_config) failure_of([&] { callbacks_.on_config(applied, note); });
}

void EngineCore::publish_weights() {
  metrics_.set_weights(std::string(weight_quant_name(config_.quant)), weights_->weight_bytes());
}

void EngineCore::publish_device(const std::string& fallback) {
  metrics_.set_device(compute_device_name(config_.device), fallback, executor_->device_memory());
}

void EngineCore::reject(RequestId id, double arrival_s, int32_t prompt_tokens, const std::string& message) {
  metrics_.on_arrival(id, arrival_s, prompt_tokens);
  metrics_.on_finished(id, now(), stop_reason_name(StopReason::Failed), 0);
  report_end(id, StopReason::Failed, message);
}

void EngineCore::add(RequestId id, EngineRequest request, double arrival_s) {
  const double t = arrival_s >= 0 ? arrival_s : now();
  Request r;
  r.id = id;
  r.arrival_s = t;
  try {
    r.tokens = encode_request(model_, request);
  } catch (const std::exception& e) {
    return reject(id, t, 0, std::string("bad prompt: ") + e.what());
  }
  try {
    validate_sampling(request.sampling);  // the executor's sampler would throw it at the engine's loop
  } catch (const std::invalid_argument& e) {
    return reject(id, t, static_cast<int32_t>(r.tokens.size()), std::string("bad sampling: ") + e.what());
  }
  r.prompt_tokens = static_cast<int32_t>(r.tokens.size());
  if (r.prompt_tokens > limit_.max_kv_tokens) {
    return reject(id, t, r.prompt_tokens,
                  "the prompt of " + std::to_string(r.prompt_tokens) +
                      " tokens leaves no room to generate: one request holds at most " +
                      std::to_string(limit_.max_kv_tokens) + " tokens (" + limit_.why + ")");
  }
  r.max_output_tokens = request.max_tokens > 0 ? request.max_tokens : limit_.max_kv_tokens - r.prompt_tokens + 1;
  // Every prompt logit a request asks for comes once, so it never scores drafts it may reject.
  r.speculate = request.speculate && request.logits != LogitsOutput::All;
  executor_->set_sampling(id, request.sampling);
  executor_->set_logits_output(id, callbacks_.on_logits ? WantedLogits{request.logits, request.logits_from} : WantedLogits{});
  metrics_.on_arrival(id, t, r.prompt_tokens);
  live_.emplace(id, Live{Utf8StreamDecoder(), StopMatcher(std::move(request.stop)), t, t});
  if (!scheduler_->add(std::move(r))) end(id, StopReason::Failed, scheduler_->request(id).refusal);
}

void EngineCore::cancel(RequestId id) {
  if (live_.contains(id)) end(id, StopReason::Aborted);
}

void EngineCore::abort_all() {
  while (!live_.empty()) end(live_.begin()->first, StopReason::Aborted);
}

void EngineCore::cancel_conversion() {
  conversion_.reset();
  metrics_.set_conversion("", 0);
}

void EngineCore::abort_unstarted(RequestId id) { report_end(id, StopReason::Aborted, {}); }

KvSnapshot EngineCore::kv_snapshot() const {
  KvSnapshot snap = kv_->snapshot();
  for (KvSnapshot::Sequence& seq : snap.sequences) {
    if (!scheduler_->contains(seq.id)) continue;
    const std::vector<TokenId>& tokens = scheduler_->request(seq.id).tokens;
    seq.tokens.assign(tokens.begin(), tokens.begin() + std::min<ptrdiff_t>(std::ssize(tokens), seq.length));
  }
  return snap;
}

StepCostModel EngineCore::step_cost_model() const {
  return StepCostModel(model_.config(), weights_->weights(), kv_->geometry().bytes_per_token());
}

void EngineCore::step() {
  if (conversion_ && conversion_->done()) finish_conversion();
  if (scheduler_->idle()) return;
  StepPlan plan;
  double chosen_k = -1;
  if (const auto failure = failure_of([&] {
        if (options_.test_fault) options_.test_fault("schedule");
        chosen_k = choose_draft_lengths();
        plan = scheduler_->schedule();
      })) {
    return fail_running_after_lost_plan("scheduling failed: " + *failure);
  }
  metrics_.on_preempted(static_cast<int64_t>(plan.preempted.size()));
  if (plan.empty()) {
    // Never expected (one request always fits an empty cache): fail the stuck head rather than spin.
    if (scheduler_->running().empty() && !scheduler_->waiting().empty()) {
      end(scheduler_->waiting().front(), StopReason::Failed, "the scheduler could not place this request");
    }
    return;
  }
  const double started = now();
  for (const ScheduledSeq& s : plan.seqs) metrics_.on_scheduled(s.id, started);
  const KvStats during = kv_->stats();  // what the step holds, before finished requests let go
  double seconds = 0;
  const int64_t dispatches = executor_->pool_dispatches();
  bool device_failed = false;
  if (const auto failure = failure_of([&] {
        try {
          seconds = executor_->execute(plan, sampled_);
        } catch (const DeviceFailure&) {
          device_failed = true;
          throw;
        }
      })) {
    // The step's sequences hold slots never written: drop them; everyone else goes on (on the CPU
    // when the device failed).
    fail_scheduled(plan, "step failed: " + *failure);
    if (device_failed) fall_back_to_cpu(*failure);
    return;
  }
  clock_.advance(seconds);
  learn_draft_lengths(plan, seconds);
  StepOutcome outcome;
  if (const auto failure = failure_of([&] {
        if (options_.test_fault) options_.test_fault("complete");
        outcome = scheduler_->complete(plan, sampled_);
      })) {
    // complete() may have applied part of the step: its requests end; everyone else goes on.
    return fail_scheduled(plan, "completing the step failed: " + *failure);
  }
  for (const auto& [id, error] : outcome.failed) end(id, StopReason::Failed, "sampling failed: " + error);
  std::vector<RequestId> stopped;
  StepMetrics m;
  std::vector<int32_t> drafted(plan.seqs.size(), 0);
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const ScheduledSeq& s = plan.seqs[i];
    drafted[i] = sampled_[i].drafted;
    m.sequences.push_back({s.id, s.prefill ? s.n_new : 0, s.prefill ? 0 : s.n_new + drafted[i], s.cached_tokens});
    if (!plan.seqs[i].sample || !sampled_[i].error.empty()) continue;
    const RequestId id = plan.seqs[i].id;
    metrics_.on_spec(id, sampled_[i].drafted, sampled_[i].verification.accepted);
    m.spec_draft_tokens += sampled_[i].drafted;
    m.spec_accepted_tokens += sampled_[i].verification.accepted;
    bool stop = false;
    // A throwing on_verify or on_token callback ends its own request only.
    if (const auto failure = failure_of([&] {
          if (sampled_[i].drafted > 0 && callbacks_.on_verify) callbacks_.on_verify(id, sampled_[i].verification);
          stop = stream_step_tokens(id, outcome.appended[i]);
        })) {
      end(id, StopReason::Failed, "on_token callback failed: " + *failure);
    } else if (stop) {
      stopped.push_back(id);
    }
  }
  for (RequestId id : stopped) end(id, StopReason::StopString);
  for (RequestId id : outcome.finished) {
    if (live_.contains(id)) end(id, scheduler_->request(id).stop);
  }
  const AttentionUse attention = executor_->last_attention();
  const SpecUse spec = executor_->last_spec();
  m.spec_chosen_k = chosen_k;
  m.draft_seconds = spec.draft_seconds;
  m.verify_seconds = spec.verify_seconds;
  m.time_s = now();
  m.duration_s = clock_.is_virtual() ? seconds : m.time_s - started;
  m.num_requests_running = static_cast<int32_t>(plan.seqs.size());
  m.num_requests_waiting = static_cast<int32_t>(scheduler_->waiting().size());
  m.prefill_tokens = plan.prefill_tokens();
  // Decode tokens computed: each decode's own token and the drafts it scored.
  m.decode_tokens = plan.new_tokens() - plan.prefill_tokens() + m.spec_draft_tokens;
  m.kv_cache_usage_perc = during.kv_cache_usage_perc();
  m.kv_internal_fragmentation_perc = during.kv_internal_fragmentation_perc();
  m.kv_reserved_unused_perc = during.kv_reserved_unused_perc();
  m.attention_scratch_bytes = attention.scratch_bytes;
  m.attention_seconds = attention.seconds;
  m.matmul_seconds = executor_->last_matmul_seconds();
  m.prefix_cache_queries = plan.prefix_queried_tokens;
  m.prefix_cache_hits = plan.prefix_cached_tokens;
  const StepCost cost = step_cost_model().step(plan, drafted);
  m.flops = cost.flops();
  m.weight_bytes_read = cost.weight_bytes;
  m.kv_bytes_read = cost.kv_bytes;
  m.preempted = plan.preempted;
  m.pool_dispatches = executor_->pool_dispatches() - dispatches;
  metrics_.on_step(m);
  metrics_.set_device_memory(executor_->device_memory());  // the device's scratch follows the batch
  publish_occupancy();
}

bool EngineCore::stream_step_tokens(RequestId id, int32_t appended) {
  const size_t size = scheduler_->request(id).tokens.size();
  for (size_t index = size - static_cast<size_t>(appended); index < size; ++index) {
    if (stream_token(id, index)) return true;  // a stop string: the rest is never shown
  }
  return false;
}

bool EngineCore::stream_token(RequestId id, size_t index) {
  Live& live = live_.at(id);
  const std::vector<TokenId>& tokens = scheduler_->request(id).tokens;
  const TokenId token = tokens[index];
  const TokenId previous = tokens[index - 1];
  const std::string piece = live.stop.push(live.decoder.push(output_piece(model_.tokenizer(), previous, token)));
  const double t = now();
  metrics_.on_token(id, t);
  if (callbacks_.on_token) callbacks_.on_token(id, piece, token, TokenTiming{t, t - live.arrival_s, t - live.last_token_s});
  live.last_token_s = t;
  return live.stop.stopped();
}

void EngineCore::end(RequestId id, StopReason reason, std::string error) {
  auto it = live_.find(id);
  const double t = now();
  if (it != live_.end() && reason != StopReason::Failed) {
    // Text held back for a possible stop string or an unfinished character comes out now.
    Live& live = it->second;
    const std::string tail = live.stop.stopped() ? std::string() : live.stop.push(live.decoder.flush()) + live.stop.flush();
    if (!tail.empty() && callbacks_.on_token) {
      const TokenTiming timing{t, t - live.arrival_s, t - live.last_token_s};
      // A callback that cannot take the last text fails its request instead.
      if (const auto failure = failure_of([&] { callbacks_.on_token(id, tail, -1, timing); })) {
        reason = StopReason::Failed;
        error = "on_token callback failed: " + *failure;
      }
    }
  }
  scheduler_->finish(id, reason);
  if (draft_lengths_) draft_lengths_->forget(id);
  metrics_.on_finished(id, t, stop_reason_name(reason), scheduler_->request(id).num_preemptions);
  executor_->forget(id);
  scheduler_->erase(id);
  live_.erase(id);
  publish_occupancy();  // a snapshot taken in the callbacks below already counts this request as gone, and its blocks free
  report_end(id, reason, error);
}

void EngineCore::report_end(RequestId id, StopReason reason, const std::string& error) const {
  // The request is gone by now: what these callbacks throw has no request left to fail, and goes no further.
  if (!error.empty() && callbacks_.on_error) failure_of([&] { callbacks_.on_error(id, error); });
  if (callbacks_.on_finished) failure_of([&] { callbacks_.on_finished(id, reason); });
}

void EngineCore::fail_scheduled(const StepPlan& plan, const std::string& message) {
  for (const ScheduledSeq& s : plan.seqs) {
    if (live_.contains(s.id)) end(s.id, StopReason::Failed, message);
  }
}

void EngineCore::fail_running_after_lost_plan(const std::string& message) {
  // Which requests it was scheduling went with the plan: every running one ends (any may hold
  // unwritten slots), and waiting ones let go of any slots a half-done admission gave them.
  const std::vector<RequestId> running = scheduler_->running();
  for (RequestId id : running) end(id, StopReason::Failed, message);
  for (RequestId id : scheduler_->waiting()) kv_->discard(id);
}

void EngineCore::publish_occupancy() {
  metrics_.set_kv(kv_->stats());
  metrics_.set_queue(static_cast<int32_t>(scheduler_->running().size()),
                     static_cast<int32_t>(scheduler_->waiting().size()));
}

}  // namespace inferscope
