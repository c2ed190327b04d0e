#include "core/engine/reconfiguration.h"

#include <stdexcept>

#include "core/attention/attention_factory.h"
#include "core/common/text_format.h"
#include "core/engine/failure_of.h"
#include "core/engine/step_cost.h"
#include "core/executor/model_executor.h"
#include "core/model/llama_model.h"
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
  o.forward = c.forward;
  o.device = c.device;
  o.attention = c.attention;
  o.weights = &weights.weights();
  o.on_logits = on_logits;
  o.forward_maker = options.forward_maker;
  return std::make_unique<ModelExecutor>(model, kv, o);
}

}  // namespace

// A config ready to commit, with everything that can fail already done.
struct Reconfigurer::Prepared {
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

Reconfigurer::Reconfigurer(const LlamaModel& model, const EngineCoreOptions& options, LogitsFn on_logits,
                           EngineParts& parts, EngineMetrics& metrics)
    : model_(model), options_(options), on_logits_(std::move(on_logits)), parts_(parts), metrics_(metrics) {}

Reconfigurer::~Reconfigurer() = default;

void Reconfigurer::build(const EngineConfig& config) {
  EngineParts& p = parts_;
  p.config = resolve_config(config, model_);
  p.weights = convert_now(model_, p.config, options_.conversion_progress);
  SpecSetup spec = build_spec(p.config, config.kv.budget_bytes == 0, p.weights->weights());
  p.target_kv = spec.target_kv;
  p.kv = build_cache(model_, p.config, p.target_kv);
  p.limit = request_limit(*p.kv, p.config.kv, p.config.context_length);
  p.executor = build_executor(model_, *p.kv, p.config, options_, *p.weights, on_logits_);
  use_proposer(std::move(spec.proposer));
  p.scheduler = std::make_unique<Scheduler>(*p.kv, p.limit, p.config.scheduler);
  publish_weights();
  publish_device("");
}

Reconfigurer::SpecSetup Reconfigurer::build_spec(EngineConfig& c, bool default_budget,
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
  setup.proposer = make_proposer(c.spec, model_, target_weights, std::move(draft), draft_kv,
                                 DraftForward{options_.forward_maker, c.forward, c.device});
  return setup;
}

void Reconfigurer::use_proposer(std::unique_ptr<Proposer> proposer) {
  // A proposer built while requests run learns of each of them.
  if (proposer && parts_.scheduler) {
    const Scheduler& scheduler = *parts_.scheduler;
    for (RequestId id : scheduler.running()) proposer->on_added(id, scheduler.request(id).prompt_tokens);
    for (RequestId id : scheduler.waiting()) proposer->on_added(id, scheduler.request(id).prompt_tokens);
  }
  parts_.executor->set_proposer(proposer.get());
  parts_.proposer = std::move(proposer);  // the old one goes only once the executor no longer points at it
  metrics_.set_spec_mode(std::string(spec_mode_name(parts_.config.spec.mode)));
}

Reconfigured Reconfigurer::apply(const EngineConfig& requested) {
  try {
    Prepared prepared = prepare(requested);
    parts_.scheduler->set_config(prepared.config.scheduler);  // its own check: nothing has changed before it
    return commit(std::move(prepared));
  } catch (const std::exception& e) {
    return Reconfigured{false, std::string("config rejected: ") + e.what(), {}};
  }
}

Reconfigurer::Prepared Reconfigurer::prepare(const EngineConfig& requested) const {
  const EngineParts& now = parts_;
  Prepared p;
  EngineConfig next = requested;
  next.threads = now.config.threads;  // fixed at construction
  next.forward = now.config.forward;
  p.config = resolve_config(next, model_);
  p.change = describe_change(now.config, p.config);
  make_attention(p.config.attention);  // validates the name
  const WeightQuant level = p.config.quant;
  p.config.quant = now.config.quant;
  const bool already_converting = now.conversion && now.conversion->level() == level;
  p.cancel_conversion = now.conversion && !already_converting;
  if (level != now.config.quant && !already_converting) {
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
  p.new_settings_cache = needs_new_cache(now.config, p.config);
  // A new spec, a new budget that a draft cache may share, or a new device for a model draft to run
  // on: a new proposer.
  p.target_kv = now.target_kv;
  if (p.new_settings_cache || !(p.config.spec == now.config.spec) || p.config.device != now.config.device) {
    p.spec = build_spec(p.config, requested.kv.budget_bytes == 0, now.weights->weights());
    p.target_kv = p.spec->target_kv;
  }
  // Another device: its forward pass built now, over the weights it will run, so a device that cannot
  // run them refuses the whole config with the factory's reason.
  if (p.config.device != now.config.device) {
    check_dry_run_device(options_, p.config.device);
    check_spec_device(p.config.spec, p.config.device);
    p.forward = options_.forward_maker(model_, p.weights ? p.weights->weights() : now.weights->weights(),
                                       now.config.forward, p.config.device);
  }
  // New weights or a new device make the cached K/V stale as well (a device keeps K/V where it
  // computes them): one new cache serves all.
  if (p.new_settings_cache || p.weights || p.forward) {
    p.kv = build_cache(model_, p.config, p.target_kv);
    p.limit = request_limit(*p.kv, p.config.kv, p.config.context_length);
  }
  return p;
}

Reconfigured Reconfigurer::commit(Prepared p) {
  const size_t old_bytes = parts_.weights->weight_bytes();
  std::string note = p.change;
  CacheSwap swap;
  if (p.kv) {
    swap = swap_cache(std::move(p.kv), std::move(p.limit));
    parts_.target_kv = p.target_kv;
  }
  if (p.new_settings_cache) {
    note += ": new KV cache; " + std::to_string(swap.preempted) +
            " running requests preempted (recomputed on the new cache)";
    if (!swap.refused.empty()) note += ", " + std::to_string(swap.refused.size()) + " no longer fit and failed";
  }
  const bool new_device = p.forward != nullptr;
  if (new_device) {
    parts_.executor->set_forward(std::move(p.forward), p.config.device);
    if (!p.new_settings_cache) {
      note += ": new KV cache; " + std::to_string(swap.preempted) + " running requests recomputed on " +
              compute_device_name(p.config.device);
    }
  }
  parts_.executor->set_attention(p.config.attention);
  parts_.config = p.config;
  if (new_device) publish_device("");
  if (p.spec) use_proposer(std::move(p.spec->proposer));
  if (p.cancel_conversion) cancel_conversion();
  std::string weights_change;
  if (p.weights) {
    const std::string level(weight_quant_name(p.weights->level()));
    const std::string device = compute_device_name(parts_.config.device);
    if (std::optional<Reconfigured> failed = use_weights(std::move(p.weights))) {
      weights_change = "the weights stay " + std::string(weight_quant_name(parts_.config.quant)) + ": " + level +
                       " could not be put on " + device + " (" + failed->note + ")";
      swap.refused.insert(swap.refused.end(), failed->refused.begin(), failed->refused.end());
    } else {
      weights_change = weights_note(old_bytes, swap.preempted);
    }
  } else if (p.convert_in_background) {
    const std::string name(weight_quant_name(*p.convert_in_background));
    parts_.conversion = std::make_unique<BackgroundConversion>(
        model_, *p.convert_in_background, parts_.config.threads,
        [this, name](double fraction, const std::string&) { metrics_.set_conversion(name, fraction); }, options_.wake);
    weights_change = "converting the weights to " + name + " in the background; requests go on with " +
                     std::string(weight_quant_name(parts_.config.quant)) + " until it is done";
  } else if (p.cancel_conversion) {
    weights_change = "weight conversion cancelled; staying on " + std::string(weight_quant_name(parts_.config.quant));
  }
  if (!weights_change.empty()) note = (note == "no change" ? "" : note + "; ") + weights_change;
  return Reconfigured{true, note, std::move(swap.refused)};
}

Reconfigurer::CacheSwap Reconfigurer::swap_cache(std::unique_ptr<KvCache> kv, RequestLimit limit) {
  CacheSwap swap;
  // The running requests keep their tokens and are recomputed on the new cache.
  const std::vector<RequestId> preempted = parts_.scheduler->preempt_all();
  swap.preempted = preempted.size();
  if (parts_.proposer) {
    for (RequestId id : preempted) parts_.proposer->on_removed(id, parts_.scheduler->request(id).tokens, true);
  }
  metrics_.on_preempted(static_cast<int64_t>(swap.preempted));
  parts_.limit = std::move(limit);
  swap.refused = parts_.scheduler->rebind(*kv, parts_.limit);
  parts_.executor->rebind(*kv);
  parts_.kv = std::move(kv);
  return swap;
}

std::optional<Reconfigured> Reconfigurer::use_weights(std::unique_ptr<ConvertedWeights> weights) {
  if (const auto failure = failure_of([&] { parts_.executor->set_weights(weights->weights()); })) {
    // The old weights fitted before: built again, they stay in use.
    const auto again = failure_of([&] { parts_.executor->set_weights(parts_.weights->weights()); });
    if (!again) return Reconfigured{false, *failure, {}};
    // Not even they fit now: the device holds no forward pass, and the engine leaves it.
    Reconfigured cpu = fall_back_to_cpu(*again);
    cpu.applied = false;
    cpu.note = *failure + "; the old weights could not be put back either: " + cpu.note;
    return cpu;
  }
  // An early-exit draft runs the target's own layers: the new ones, from now on.
  const EngineConfig& c = parts_.config;
  if (c.spec.mode == SpecMode::EarlyExit) {
    use_proposer(make_proposer(c.spec, model_, weights->weights(), DraftModel{}, parts_.target_kv,
                               DraftForward{options_.forward_maker, c.forward, c.device}));
  }
  parts_.weights = std::move(weights);
  parts_.config.quant = parts_.weights->level();
  publish_weights();
  return std::nullopt;
}

std::string Reconfigurer::weights_note(size_t old_bytes, size_t preempted) const {
  std::string note = "weights now " + std::string(weight_quant_name(parts_.config.quant)) + ": " +
                     format_mib(parts_.weights->weight_bytes()) + " (was " + format_mib(old_bytes) +
                     "); new KV cache, " + std::to_string(preempted) + " running requests recomputed with the new weights";
  const std::string fallbacks = fallback_summary(parts_.weights->fallbacks());
  if (!fallbacks.empty()) note += "; rows not whole blocks: " + fallbacks;
  return note;
}

Reconfigured Reconfigurer::finish_conversion() {
  std::unique_ptr<BackgroundConversion> done = std::move(parts_.conversion);
  metrics_.set_conversion("", 0);
  try {
    std::unique_ptr<ConvertedWeights> weights = done->take();
    const size_t old_bytes = parts_.weights->weight_bytes();
    // Cached K/V were computed by the old weights: a new cache (built before anything changes), and
    // running requests recomputed on it. The limit stays, so no request is refused.
    CacheSwap swap = swap_cache(build_cache(model_, parts_.config, parts_.target_kv), parts_.limit);
    const std::string device = compute_device_name(parts_.config.device);
    if (std::optional<Reconfigured> failed = use_weights(std::move(weights))) {
      failed->note = "the weights converted to " + std::string(weight_quant_name(done->level())) +
                     " could not be put on " + device + " (" + failed->note + "); staying on " +
                     std::string(weight_quant_name(parts_.config.quant));
      failed->refused.insert(failed->refused.begin(), swap.refused.begin(), swap.refused.end());
      return std::move(*failed);
    }
    return Reconfigured{true, weights_note(old_bytes, swap.preempted), std::move(swap.refused)};
  } catch (const std::exception& e) {
    return Reconfigured{
        false, "converting the weights to " + std::string(weight_quant_name(done->level())) + " failed: " + e.what(), {}};
  }
}

Reconfigured Reconfigurer::fall_back_to_cpu(const std::string& failure) {
  const std::string from = compute_device_name(parts_.config.device);
  // The quant switch's path onto the CPU: what is in use now stays (a conversion in flight goes on).
  EngineConfig cpu = parts_.config;
  cpu.device = ComputeDevice{};
  if (parts_.conversion) cpu.quant = parts_.conversion->level();
  Reconfigured done;
  if (const auto failed = failure_of([&] { done = commit(prepare(cpu)); })) {
    return Reconfigured{false, "device " + from + " failed (" + failure + "); moving to the CPU failed too: " + *failed, {}};
  }
  publish_device("fell back from " + from + " after: " + failure);
  done.note = "device " + from + " failed (" + failure + "): " + done.note;
  return done;
}

void Reconfigurer::cancel_conversion() {
  parts_.conversion.reset();  // cancels it and waits for its worker
  metrics_.set_conversion("", 0);
}

void Reconfigurer::publish_weights() {
  metrics_.set_weights(std::string(weight_quant_name(parts_.config.quant)), parts_.weights->weight_bytes());
}

void Reconfigurer::publish_device(const std::string& fallback) {
  metrics_.set_device(compute_device_name(parts_.config.device), fallback, parts_.executor->device_memory());
}

}  // namespace inferscope
