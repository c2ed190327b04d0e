// The Engine: runs an EngineCore (the KV cache, the scheduler and the model executor with each
// request's sampler: docs/ARCHITECTURE.md §3's step loop) on one dedicated thread. Every public call is
// thread-safe and returns at once (kv_snapshot() waits at most one step); requests and commands
// go through a queue that the engine thread drains between steps, and it sleeps on a condition
// variable while there is nothing to do.
#pragma once
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "core/engine/engine_core.h"
#include "core/engine/inference_engine.h"

namespace inferscope {

class Engine final : public InferenceEngine {
 public:
  // Builds the cache and the executor (throws std::invalid_argument for a bad config), then starts the
  // thread. `options.wake` is the engine's own.
  Engine(const LlamaModel& model, EngineConfig config, EngineCallbacks callbacks, EngineCoreOptions options = {});
  // Aborts what is left (on_finished(Aborted) for each), joins the thread and frees everything.
  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request; its errors (bad prompt, too long) come back through the callbacks.
  RequestId submit(EngineRequest request) override;
  // Ends a request between steps (on_finished(Aborted)), freeing its memory; unknown ids are ignored.
  void cancel(RequestId id) override;
  // Applied between steps (always true); threads and matmul keep their construction values. A new
  // KV cache preempts the running requests (recomputed on the new one); on_config says so.
  bool set_config(EngineConfig config) override;
  EngineConfig config() const;
  EngineMetricsSnapshot metrics_snapshot() const override;
  std::string source() const override { return {}; }
  // The cache's block table, taken by the engine thread between steps.
  std::optional<KvSnapshot> kv_snapshot() override;
  const LlamaModel& model() const { return core_.model(); }

 private:
  struct Inbox {
    std::vector<std::pair<RequestId, EngineRequest>> submitted;
    std::vector<RequestId> cancelled;
    std::vector<EngineConfig> configs;  // applied in order
    bool snapshot = false;
  };

  void run();

  EngineCore core_;  // touched only by the engine thread once it runs (its metrics are thread-safe)

  // Shared with callers, under mu_.
  mutable std::mutex mu_;
  std::condition_variable wake_, snapshot_ready_;
  Inbox inbox_;
  EngineConfig requested_config_;
  RequestId next_id_ = 0;
  bool stopping_ = false, stopped_ = false;
  uint64_t snapshot_generation_ = 0;
  KvSnapshot snapshot_;

  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace inferscope
