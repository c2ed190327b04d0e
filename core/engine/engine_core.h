// The engine's step loop without a thread (vLLM's EngineCore): owns the KV cache, the scheduler and
// a step executor (the model with each request's sampler, or serve-sim's dry run), and turns each
// scheduled step into streamed tokens, finished requests and metrics. Single-threaded: the Engine
// drives it from its own thread; serve-sim and the workload runner drive it directly, on the wall
// clock or (dry run) on a virtual one.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/engine/background_conversion.h"
#include "core/engine/engine_clock.h"
#include "core/engine/engine_config.h"
#include "core/engine/engine_metrics.h"
#include "core/engine/engine_request.h"
#include "core/engine/step_cost.h"
#include "core/engine/stop_strings.h"
#include "core/kv/kv_cache.h"
#include "core/sched/dry_run_executor.h"
#include "core/sched/forward_factory.h"
#include "core/sched/scheduler.h"
#include "core/sched/step_executor.h"
#include "core/spec/draft_length.h"
#include "core/spec/proposer.h"
#include "core/tokenizer/tokenizer.h"

namespace inferscope {

struct EngineCoreOptions {
  // Set: no forward pass; each step costs this modelled time on a virtual clock (serve-sim --dry-run).
  std::optional<DryRunPricing> dry_run;
  size_t step_window = EngineMetrics::kStepWindow;          // steps kept for metrics (SIZE_MAX: all)
  size_t finished_window = EngineMetrics::kFinishedWindow;  // finished requests kept (SIZE_MAX: all)
  // Called from a worker thread when a background weight conversion has finished: the driver
  // should call step() soon (the Engine wakes its thread).
  std::function<void()> wake;
  // Progress of the conversion to config.quant's level that the constructor runs (none when empty).
  ConversionProgressFn conversion_progress;
  // Test seam, empty otherwise: called just before steps that fail only on exhaustion in practice
  // ("convert weights" at once, "schedule", "complete"), so tests can make them throw.
  std::function<void(std::string_view where)> test_fault;
  // Builds the forward passes (at construction, on a device switch, for new weights); tests give one
  // whose device fails.
  ForwardMaker forward_maker = inferscope::make_forward;
};

class EngineCore {
 public:
  // Builds the cache and the executor; throws std::invalid_argument for a bad config.
  EngineCore(const LlamaModel& model, EngineConfig config, EngineCallbacks callbacks, EngineCoreOptions options = {});
  ~EngineCore();
  EngineCore(const EngineCore&) = delete;
  EngineCore& operator=(const EngineCore&) = delete;

  // Starts request `id`, which arrived at `arrival_s` (< 0: now); a bad or oversized one ends at
  // once through the callbacks.
  void add(RequestId id, EngineRequest request, double arrival_s = -1);
  // Ends a live request (on_finished(Aborted)); unknown or ended ids are ignored.
  void cancel(RequestId id);
  // Applies a config between steps (on_config says what happened); threads and matmul stay fixed. A
  // new device is refused (on_config says why) when a forward pass cannot be built there.
  void apply_config(const EngineConfig& requested);
  // Swaps in finished converted weights, then runs one scheduling step (none when idle). A step
  // whose device fails (DeviceFailure) ends its requests and moves the engine to the CPU.
  void step();
  // True when step() has something to do: requests, or converted weights to swap in.
  bool has_work() const { return !idle() || (conversion_ && conversion_->done()); }
  // Ends every live request as aborted.
  void abort_all();
  // Reports a request that was submitted but never added (the engine shut down first) as aborted.
  void abort_unstarted(RequestId id);
  // Stops a background weight conversion and waits for its worker (the weights in use stay).
  void cancel_conversion();

  bool idle() const { return scheduler_->idle(); }
  bool contains(RequestId id) const { return live_.contains(id); }
  const EngineConfig& config() const { return config_; }
  // The most KV slots one request may hold (prompt + output - 1), and what sets that limit.
  const RequestLimit& limit() const { return limit_; }
  // The block table, with each sequence's token ids.
  KvSnapshot kv_snapshot() const;
  KvStats kv_stats() const { return kv_->stats(); }
  const EngineMetrics& metrics() const { return metrics_; }
  // The weights the steps read, at config().quant's level.
  const ConvertedWeights& weights() const { return *weights_; }
  // What a step costs on the weights and cache in use (FLOPs, bytes read).
  StepCostModel step_cost_model() const;
  EngineClock& clock() { return clock_; }
  double now() const { return clock_.now(); }
  const LlamaModel& model() const { return model_; }

 private:
  // A request as the core streams it.
  struct Live {
    Utf8StreamDecoder decoder;
    StopMatcher stop;
    double arrival_s = 0, last_token_s = 0;
  };

  // A config checked and made ready (a new cache built, weights converted at once): applying it
  // changes state but cannot fail for a reason of the config.
  struct PreparedConfig;
  // The proposer a config names, and the target cache's settings beside it.
  struct SpecSetup {
    std::unique_ptr<Proposer> proposer;
    KvConfig target_kv;  // c.kv less an own-KV draft's share of the budget
  };
  // Builds c.spec's proposer (loading or converting a draft model) on `target_weights`. An own-KV
  // draft takes its share of c.kv.budget_bytes; with `default_budget` the budget first grows by
  // room for as many tokens. Throws std::invalid_argument for a bad spec (or any spec in a dry run).
  SpecSetup build_spec(EngineConfig& c, bool default_budget, const LlamaWeights& target_weights) const;
  // Puts `proposer` in use for later steps.
  void use_proposer(std::unique_ptr<Proposer> proposer);
  // Starts the adaptive draft lengths afresh (k = auto): the step costs measured so far no longer hold.
  void restart_draft_lengths();
  // Before a step: the most drafts each speculating decode scores (k = auto's choice, or the fixed
  // k). Returns their mean (-1: no speculating decode).
  double choose_draft_lengths();
  // After a step of `plan` that took `seconds`: its verifies, shadow drafts and, without prefill, its cost.
  void learn_draft_lengths(const StepPlan& plan, double seconds);
  // What moving onto a new cache did: running requests preempted, waiting ones that no longer fit.
  struct CacheSwap {
    size_t preempted = 0;
    std::vector<RequestId> refused;
  };
  // Everything about `requested` that can fail, with no state touched.
  PreparedConfig prepare_config(const EngineConfig& requested) const;
  // Puts a prepared config in use; returns what it did. Starts (or cancels) a background conversion.
  std::string commit_config(PreparedConfig prepared);
  // Moves every request onto `kv`: running ones are preempted, to be recomputed there.
  CacheSwap swap_cache(std::unique_ptr<KvCache> kv, RequestLimit limit);
  // Puts `weights` in use (the cache must already be one they did not write to).
  void use_weights(std::unique_ptr<ConvertedWeights> weights);
  std::string weights_note(size_t old_bytes, size_t preempted) const;
  // Puts `weights` in use: a new KV cache, running requests recomputed under them.
  std::string install_weights(std::unique_ptr<ConvertedWeights> weights);
  // Swaps in a finished background conversion (or reports its failure).
  void finish_conversion();
  // After `failure` on the device in use: the CPU from now on (a new cache, running requests
  // recomputed there); the metrics say why, on_config says what happened.
  void fall_back_to_cpu(const std::string& failure);
  // Calls on_config; what it throws goes no further.
  void report_config(bool applied, const std::string& note) const;
  void publish_weights();
  // The device in use and, when it is not the one asked for, why (`fallback`).
  void publish_device(const std::string& fallback);
  // Fails a request that never reached the scheduler (bad prompt, too long).
  void reject(RequestId id, double arrival_s, int32_t prompt_tokens, const std::string& message);
  // Streams output token `index` of `id`'s tokens; true when a stop string ended it.
  bool stream_token(RequestId id, size_t index);
  // Streams the last `appended` tokens of `id` (those this step gave it); true when a stop string ended it.
  bool stream_step_tokens(RequestId id, int32_t appended);
  // Ends a request the scheduler holds: flushes its text, reports, forgets it. `error` is a copy: it
  // may come from the request record that this erases.
  void end(RequestId id, StopReason reason, std::string error = {});
  // Calls on_error (when `error` is set), then on_finished; what they throw goes no further.
  void report_end(RequestId id, StopReason reason, const std::string& error) const;
  // Ends each request of `plan` that is still live as failed (a step that failed part-way).
  void fail_scheduled(const StepPlan& plan, const std::string& message);
  // Ends every running request as failed after schedule() threw (its plan is lost).
  void fail_running_after_lost_plan(const std::string& message);
  // The running and waiting counts and the cache's occupancy, for snapshots between steps.
  void publish_occupancy();

  const LlamaModel& model_;
  const EngineCallbacks callbacks_;
  const EngineCoreOptions options_;
  EngineClock clock_;
  EngineConfig config_;
  KvConfig target_kv_;  // what kv_ was built with: config_.kv less a draft cache's share
  std::unique_ptr<KvCache> kv_;
  RequestLimit limit_;
  std::unique_ptr<ConvertedWeights> weights_;  // what the executor reads (a view of the model's at native)
  std::unique_ptr<Proposer> proposer_;         // drafts for speculative decoding (null when off)
  std::optional<DraftLengthPolicy> draft_lengths_;  // chooses each decode's drafts (spec k = auto)
  std::unique_ptr<StepExecutor> executor_;
  std::unique_ptr<Scheduler> scheduler_;
  std::map<RequestId, Live> live_;
  std::vector<SampledToken> sampled_;
  EngineMetrics metrics_;  // thread-safe on its own: others read snapshots while the core runs
  // To another level while requests go on; last, so its worker stops before what it reports to goes.
  std::unique_ptr<BackgroundConversion> conversion_;
};

}  // namespace inferscope
