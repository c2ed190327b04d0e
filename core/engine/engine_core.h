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
#include <vector>

#include "core/engine/background_conversion.h"
#include "core/engine/engine_clock.h"
#include "core/engine/engine_config.h"
#include "core/engine/engine_metrics.h"
#include "core/engine/engine_request.h"
#include "core/engine/stop_strings.h"
#include "core/kv/kv_cache.h"
#include "core/sched/dry_run_executor.h"
#include "core/sched/scheduler.h"
#include "core/sched/step_executor.h"
#include "core/tokenizer/tokenizer.h"

namespace inferscope {

struct EngineCoreOptions {
  // Set: no forward pass; each step costs this modelled time on a virtual clock (serve-sim --dry-run).
  std::optional<StepCost> dry_run;
  size_t step_window = EngineMetrics::kStepWindow;          // steps kept for metrics (SIZE_MAX: all)
  size_t finished_window = EngineMetrics::kFinishedWindow;  // finished requests kept (SIZE_MAX: all)
  // Called from a worker thread when a background weight conversion has finished: the driver
  // should call step() soon (the Engine wakes its thread).
  std::function<void()> wake;
  // Progress of the conversion to config.quant's level that the constructor runs (none when empty).
  ConversionProgressFn conversion_progress;
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
  // Applies a config between steps (on_config says what happened); threads and matmul stay fixed.
  void apply_config(const EngineConfig& requested);
  // Swaps in finished converted weights, then runs one scheduling step (none when idle).
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
  const EngineMetrics& metrics() const { return metrics_; }
  // The weights the steps read, at config().quant's level.
  const ConvertedWeights& weights() const { return *weights_; }
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

  // Starts converting to config_.quant's level in the background, or swaps at once when no
  // conversion is needed; cancels a conversion to another level. Returns what it did.
  std::string switch_weights(WeightQuant level);
  // Puts `weights` in use: a new KV cache, running requests recomputed under them.
  std::string install_weights(std::unique_ptr<ConvertedWeights> weights);
  // Swaps in a finished background conversion (or reports its failure).
  void finish_conversion();
  void publish_weights();
  // Fails a request that never reached the scheduler (bad prompt, too long).
  void reject(RequestId id, double arrival_s, int32_t prompt_tokens, const std::string& message);
  // Streams one sampled token of `id`; true when a stop string ended it.
  bool stream_token(RequestId id, TokenId token);
  // Ends a request the scheduler holds: flushes its text, reports, forgets it. `error` is a copy: it
  // may come from the request record that this erases.
  void end(RequestId id, StopReason reason, std::string error = {});
  void publish_queue();

  const LlamaModel& model_;
  const EngineCallbacks callbacks_;
  const EngineCoreOptions options_;
  EngineClock clock_;
  EngineConfig config_;
  std::unique_ptr<KvCache> kv_;
  RequestLimit limit_;
  std::unique_ptr<ConvertedWeights> weights_;  // what the executor reads (a view of the model's at native)
  std::unique_ptr<StepExecutor> executor_;
  std::unique_ptr<Scheduler> scheduler_;
  std::map<RequestId, Live> live_;
  std::vector<SampledToken> sampled_;
  EngineMetrics metrics_;  // thread-safe on its own: others read snapshots while the core runs
  // To another level while requests go on; last, so its worker stops before what it reports to goes.
  std::unique_ptr<BackgroundConversion> conversion_;
};

}  // namespace inferscope
