// The engine's step loop without a thread (vLLM's EngineCore): add, cancel, and step (schedule ->
// execute -> complete -> stream -> record). It runs on the parts a config builds (the KV cache, the
// scheduler, a step executor: the model with each request's sampler, or serve-sim's dry run), which
// the Reconfigurer (reconfiguration.h) builds and swaps; the OutputProcessor (output_processor.h)
// turns tokens into streamed text. Single-threaded: the Engine drives it from its own thread;
// serve-sim and the workload runner drive it directly, on the wall clock or (dry run) on a virtual one.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/engine/engine_clock.h"
#include "core/engine/engine_config.h"
#include "core/engine/engine_core_options.h"
#include "core/engine/engine_metrics.h"
#include "core/engine/engine_request.h"
#include "core/engine/output_processor.h"
#include "core/engine/reconfiguration.h"
#include "core/engine/step_cost.h"
#include "core/spec/draft_length.h"

namespace inferscope {

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
  // Applies a config between steps (on_config says what happened); threads and the forward options stay fixed. A
  // new device is refused (on_config says why) when a forward pass cannot be built there.
  void apply_config(const EngineConfig& requested);
  // Swaps in finished converted weights, then runs one scheduling step (none when idle). A step
  // whose device fails (DeviceFailure) ends its requests; the engine moves to the CPU when the device
  // is lost, or after kDeviceStepFailuresBeforeCpu steps in a row failed on it alone.
  void step();
  static constexpr int32_t kDeviceStepFailuresBeforeCpu = 3;
  // True when step() has something to do: requests, or converted weights to swap in.
  bool has_work() const { return !idle() || (parts_.conversion && parts_.conversion->done()); }
  // Ends every live request as aborted.
  void abort_all();
  // Reports a request that was submitted but never added (the engine shut down first) as aborted.
  void abort_unstarted(RequestId id);
  // Stops a background weight conversion and waits for its worker (the weights in use stay).
  void cancel_conversion() { reconfigurer_.cancel_conversion(); }

  bool idle() const { return parts_.scheduler->idle(); }
  bool contains(RequestId id) const { return output_.contains(id); }
  const EngineConfig& config() const { return parts_.config; }
  // The most KV slots one request may hold (prompt + output - 1), and what sets that limit.
  const RequestLimit& limit() const { return parts_.limit; }
  // The block table, with each sequence's token ids.
  KvSnapshot kv_snapshot() const;
  KvStats kv_stats() const { return parts_.kv->stats(); }
  const EngineMetrics& metrics() const { return metrics_; }
  // The weights the steps read, at config().quant's level.
  const ConvertedWeights& weights() const { return *parts_.weights; }
  // What a step costs on the weights and cache in use (FLOPs, bytes read).
  StepCostModel step_cost_model() const;
  EngineClock& clock() { return clock_; }
  double now() const { return clock_.now(); }
  const LlamaModel& model() const { return model_; }

 private:
  // Starts the adaptive draft lengths afresh (k = auto): the step costs measured so far no longer hold.
  void restart_draft_lengths();
  // Before a step: the most drafts each speculating decode scores (k = auto's choice, or the fixed
  // k). Returns their mean (-1: no speculating decode).
  double choose_draft_lengths();
  // After a step of `plan`: its verifies, shadow drafts and, without prefill, its cost.
  void learn_draft_lengths(const StepPlan& plan, const StepResult& result);
  // Streams what the step gave each of its requests and ends those it finished.
  void stream_step(const StepPlan& plan, const StepResult& result, const StepOutcome& outcome);
  // After a reconfiguration: the draft lengths start afresh when it applied, the requests it refused
  // end, and on_config says what it did.
  void reconfigured(Reconfigured done);
  // Calls on_config; what it throws goes no further.
  void report_config(bool applied, const std::string& note) const;
  // Fails a request that never reached the scheduler (bad prompt, too long).
  void reject(RequestId id, double arrival_s, int32_t prompt_tokens, const std::string& message);
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
  EngineMetrics metrics_;  // thread-safe on its own: others read snapshots while the core runs
  OutputProcessor output_;
  // After the metrics, which a background conversion's progress reports to.
  EngineParts parts_;
  Reconfigurer reconfigurer_;
  std::optional<DraftLengthPolicy> draft_lengths_;  // chooses each decode's drafts (spec k = auto)
  int32_t device_step_failures_ = 0;  // steps in a row whose device failed with its context usable
};

}  // namespace inferscope
