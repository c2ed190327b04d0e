#include "core/engine/engine.h"

#include <algorithm>
#include <stdexcept>

#include "core/attention/attention_factory.h"
#include "core/engine/generation.h"
#include "core/engine/prompt.h"
#include "core/model/llama_model.h"

namespace inferscope {
namespace {

std::unique_ptr<KvCache> build_cache(const LlamaModel& model, const EngineConfig& c) {
  return make_kv_cache(model.kv_geometry(c.kv_dtype), c.kv);
}

ModelExecutorOptions executor_options(const EngineConfig& c) {
  ModelExecutorOptions o;
  o.threads = c.threads;
  o.matmul = c.matmul;
  o.attention = c.attention;
  o.stop_at_eog = true;
  return o;
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

Engine::Engine(const LlamaModel& model, EngineConfig config, EngineCallbacks callbacks)
    : model_(model),
      callbacks_(std::move(callbacks)),
      start_(std::chrono::steady_clock::now()),
      config_(resolve_config(std::move(config), model)),
      kv_(build_cache(model, config_)),
      limit_(request_limit(*kv_, config_.kv, config_.context_length)),
      executor_(std::make_unique<ModelExecutor>(model, *kv_, executor_options(config_))),
      scheduler_(std::make_unique<Scheduler>(*kv_, limit_, config_.scheduler)),
      requested_config_(config_),
      thread_([this] { run(); }) {}

Engine::~Engine() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

RequestId Engine::submit(EngineRequest request) {
  RequestId id;
  {
    std::lock_guard lock(mu_);
    id = next_id_++;
    inbox_.submitted.emplace_back(id, std::move(request));
  }
  wake_.notify_one();
  return id;
}

void Engine::cancel(RequestId id) {
  {
    std::lock_guard lock(mu_);
    inbox_.cancelled.push_back(id);
  }
  wake_.notify_one();
}

void Engine::set_config(EngineConfig config) {
  {
    std::lock_guard lock(mu_);
    requested_config_ = config;
    inbox_.configs.push_back(std::move(config));
  }
  wake_.notify_one();
}

EngineConfig Engine::config() const {
  std::lock_guard lock(mu_);
  return requested_config_;
}

EngineMetricsSnapshot Engine::metrics_snapshot() const { return metrics_.snapshot(now()); }

KvSnapshot Engine::kv_snapshot() {
  std::unique_lock lock(mu_);
  const uint64_t seen = snapshot_generation_;
  inbox_.snapshot = true;
  wake_.notify_one();
  snapshot_ready_.wait(lock, [&] { return snapshot_generation_ > seen || stopped_; });
  return snapshot_;
}

double Engine::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Engine::run() {
  while (true) {
    Inbox in;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] {
        return stopping_ || !scheduler_->idle() || !inbox_.submitted.empty() || !inbox_.cancelled.empty() ||
               !inbox_.configs.empty() || inbox_.snapshot;
      });
      if (stopping_) break;
      std::swap(in, inbox_);
    }
    for (const EngineConfig& c : in.configs) apply_config(c);
    for (auto& [id, request] : in.submitted) start(id, std::move(request));
    for (RequestId id : in.cancelled) {
      if (live_.contains(id)) end(id, StopReason::Aborted);
    }
    if (in.snapshot) {
      KvSnapshot snap = kv_->snapshot();
      std::lock_guard lock(mu_);
      snapshot_ = std::move(snap);
      ++snapshot_generation_;
      snapshot_ready_.notify_all();
    }
    if (!scheduler_->idle()) step();
    publish_queue();
  }
  // Shutting down: whatever is left ends as aborted, requests never started included.
  std::vector<std::pair<RequestId, EngineRequest>> unstarted;
  {
    std::lock_guard lock(mu_);
    unstarted = std::move(inbox_.submitted);
  }
  while (!live_.empty()) end(live_.begin()->first, StopReason::Aborted);
  for (const auto& [id, request] : unstarted) {
    if (callbacks_.on_finished) callbacks_.on_finished(id, StopReason::Aborted);
  }
  std::lock_guard lock(mu_);
  stopped_ = true;
  snapshot_ready_.notify_all();
}

void Engine::apply_config(const EngineConfig& requested) {
  EngineConfig next = requested;
  next.threads = config_.threads;  // fixed at construction
  next.matmul = config_.matmul;
  std::string note;
  try {
    next = resolve_config(next, model_);
    const std::string change = describe_change(config_, next);
    make_attention(next.attention);          // validates the name before anything changes
    scheduler_->set_config(next.scheduler);  // validates before anything else changes
    if (needs_new_cache(config_, next)) {
      std::unique_ptr<KvCache> kv = build_cache(model_, next);
      // The running requests keep their tokens and are recomputed on the new cache.
      const std::vector<RequestId> preempted = scheduler_->preempt_all();
      metrics_.on_preempted(static_cast<int64_t>(preempted.size()));
      limit_ = request_limit(*kv, next.kv, next.context_length);
      const std::vector<RequestId> refused = scheduler_->rebind(*kv, limit_);
      executor_->rebind(*kv);
      kv_ = std::move(kv);
      note = change + ": new KV cache; " + std::to_string(preempted.size()) +
             " running requests preempted (recomputed on the new cache)";
      for (RequestId id : refused) end(id, StopReason::Failed, scheduler_->request(id).refusal);
      if (!refused.empty()) note += ", " + std::to_string(refused.size()) + " no longer fit and failed";
    } else {
      note = change;
    }
    executor_->set_attention(next.attention);
    config_ = next;
  } catch (const std::exception& e) {
    scheduler_->set_config(config_.scheduler);
    if (callbacks_.on_config) callbacks_.on_config(false, std::string("config rejected: ") + e.what());
    return;
  }
  if (callbacks_.on_config) callbacks_.on_config(true, note);
}

void Engine::start(RequestId id, EngineRequest request) {
  const double t = now();
  auto fail = [&](const std::string& message) {
    if (callbacks_.on_error) callbacks_.on_error(id, message);
    if (callbacks_.on_finished) callbacks_.on_finished(id, StopReason::Failed);
  };
  Request r;
  r.id = id;
  r.arrival_s = t;
  try {
    r.tokens = encode_request(model_, request);
  } catch (const std::exception& e) {
    return fail(std::string("bad prompt: ") + e.what());
  }
  r.prompt_tokens = static_cast<int32_t>(r.tokens.size());
  if (r.prompt_tokens >= limit_.max_kv_tokens) {
    return fail("the prompt of " + std::to_string(r.prompt_tokens) + " tokens leaves no room to generate: one request holds at most " +
                std::to_string(limit_.max_kv_tokens) + " tokens (" + limit_.why + ")");
  }
  r.max_output_tokens = request.max_tokens > 0 ? request.max_tokens : limit_.max_kv_tokens - r.prompt_tokens + 1;
  executor_->set_sampling(id, request.sampling);
  metrics_.on_arrival(id, t, r.prompt_tokens);
  live_.emplace(id, Live{Utf8StreamDecoder(), StopMatcher(std::move(request.stop)), t, t});
  if (!scheduler_->add(std::move(r))) end(id, StopReason::Failed, scheduler_->request(id).refusal);
}

void Engine::step() {
  const StepPlan plan = scheduler_->schedule();
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
  try {
    executor_->execute(plan, sampled_);
  } catch (const std::exception& e) {
    // The step's sequences hold slots never written: drop them; everyone else goes on.
    for (const ScheduledSeq& s : plan.seqs) end(s.id, StopReason::Failed, std::string("step failed: ") + e.what());
    return;
  }
  const StepOutcome outcome = scheduler_->complete(plan, sampled_);
  const double ended = now();
  std::vector<RequestId> stopped;
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    if (!plan.seqs[i].sample || sampled_[i].end_of_generation) continue;
    if (emit(plan.seqs[i].id, sampled_[i].token)) stopped.push_back(plan.seqs[i].id);
  }
  for (RequestId id : stopped) end(id, StopReason::StopString);
  for (RequestId id : outcome.finished) {
    if (live_.contains(id)) end(id, scheduler_->request(id).stop);
  }
  StepMetrics m;
  m.time_s = ended;
  m.duration_s = ended - started;
  m.num_requests_running = static_cast<int32_t>(plan.seqs.size());
  m.num_requests_waiting = static_cast<int32_t>(scheduler_->waiting().size());
  m.prefill_tokens = plan.prefill_tokens();
  m.decode_tokens = plan.new_tokens() - plan.prefill_tokens();
  m.kv_cache_usage_perc = during.kv_cache_usage_perc();
  m.kv_internal_fragmentation_perc = during.kv_internal_fragmentation_perc();
  m.kv_reserved_unused_perc = during.kv_reserved_unused_perc();
  m.attention_scratch_bytes = executor_->last_attention_scratch_bytes();
  m.attention_seconds = executor_->last_attention_seconds();
  metrics_.on_step(m, kv_->stats());
}

bool Engine::emit(RequestId id, TokenId token) {
  Live& live = live_.at(id);
  const std::vector<TokenId>& tokens = scheduler_->request(id).tokens;
  const TokenId previous = tokens[tokens.size() - 2];  // the token before the one just appended
  const std::string piece = live.stop.push(live.decoder.push(output_piece(model_.tokenizer(), previous, token)));
  const double t = now();
  metrics_.on_token(id, t);
  if (callbacks_.on_token) callbacks_.on_token(id, piece, token, TokenTiming{t, t - live.arrival_s, t - live.last_token_s});
  live.last_token_s = t;
  return live.stop.stopped();
}

void Engine::end(RequestId id, StopReason reason, const std::string& error) {
  auto it = live_.find(id);
  const double t = now();
  if (it != live_.end() && reason != StopReason::Failed) {
    // Text held back for a possible stop string or an unfinished character comes out now.
    Live& live = it->second;
    const std::string tail = live.stop.stopped() ? std::string() : live.stop.push(live.decoder.flush()) + live.stop.flush();
    if (!tail.empty() && callbacks_.on_token) {
      callbacks_.on_token(id, tail, -1, TokenTiming{t, t - live.arrival_s, t - live.last_token_s});
    }
  }
  scheduler_->finish(id, reason);
  metrics_.on_finished(id, t, stop_reason_name(reason), scheduler_->request(id).num_preemptions);
  executor_->forget(id);
  scheduler_->erase(id);
  live_.erase(id);
  publish_queue();  // a snapshot taken in the callbacks below already counts this request as gone
  if (!error.empty() && callbacks_.on_error) callbacks_.on_error(id, error);
  if (callbacks_.on_finished) callbacks_.on_finished(id, reason);
}

void Engine::publish_queue() {
  metrics_.set_queue(static_cast<int32_t>(scheduler_->running().size()),
                     static_cast<int32_t>(scheduler_->waiting().size()));
}

}  // namespace inferscope
