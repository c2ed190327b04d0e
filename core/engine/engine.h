// The Engine: owns the KV cache, the scheduler and the model executor (with each request's
// sampler), and runs ARCHITECTURE.md §3's step loop on one dedicated thread. Every public call is
// thread-safe and returns at once (kv_snapshot() waits at most one step); requests and commands
// go through a queue that the engine thread drains between steps, and it sleeps on a condition
// variable while there is nothing to do.
#pragma once
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/engine/engine_config.h"
#include "core/engine/engine_metrics.h"
#include "core/engine/engine_request.h"
#include "core/engine/stop_strings.h"
#include "core/kv/kv_cache.h"
#include "core/sched/model_executor.h"
#include "core/sched/scheduler.h"
#include "core/tokenizer/tokenizer.h"

namespace inferscope {

class Engine {
 public:
  // Builds the cache and the executor (throws std::invalid_argument for a bad config), then starts the thread.
  Engine(const LlamaModel& model, EngineConfig config, EngineCallbacks callbacks);
  // Aborts what is left (on_finished(Aborted) for each), joins the thread and frees everything.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request; its errors (bad prompt, too long) come back through the callbacks.
  RequestId submit(EngineRequest request);
  // Ends a request between steps (on_finished(Aborted)), freeing its memory; unknown ids are ignored.
  void cancel(RequestId id);
  // Applied between steps; threads and matmul keep their construction values. A new KV cache
  // preempts the running requests (recomputed on the new one); on_config says so.
  void set_config(EngineConfig config);
  EngineConfig config() const;
  EngineMetricsSnapshot metrics_snapshot() const;
  // The cache's block table, taken by the engine thread between steps.
  KvSnapshot kv_snapshot();
  const LlamaModel& model() const { return model_; }

 private:
  // A request as the engine thread streams it.
  struct Live {
    Utf8StreamDecoder decoder;
    StopMatcher stop;
    double arrival_s = 0, last_token_s = 0;
  };
  struct Inbox {
    std::vector<std::pair<RequestId, EngineRequest>> submitted;
    std::vector<RequestId> cancelled;
    std::vector<EngineConfig> configs;  // applied in order
    bool snapshot = false;
  };

  void run();
  double now() const;
  void apply_config(const EngineConfig& next);
  void start(RequestId id, EngineRequest request);
  void step();
  // Streams one sampled token of `id`; true when a stop string ended it.
  bool emit(RequestId id, TokenId token);
  // Ends a request the scheduler holds: flushes its text, reports, forgets it.
  void end(RequestId id, StopReason reason, const std::string& error = {});
  void publish_queue();

  const LlamaModel& model_;
  const EngineCallbacks callbacks_;
  const std::chrono::steady_clock::time_point start_;

  // Engine-thread state.
  EngineConfig config_;
  std::unique_ptr<KvCache> kv_;
  RequestLimit limit_;
  std::unique_ptr<ModelExecutor> executor_;
  std::unique_ptr<Scheduler> scheduler_;
  std::map<RequestId, Live> live_;
  std::vector<SampledToken> sampled_;

  // Shared with callers, under mu_.
  mutable std::mutex mu_;
  std::condition_variable wake_, snapshot_ready_;
  Inbox inbox_;
  EngineConfig requested_config_;
  RequestId next_id_ = 0;
  bool stopping_ = false, stopped_ = false;
  uint64_t snapshot_generation_ = 0;
  KvSnapshot snapshot_;

  EngineMetrics metrics_;  // thread-safe on its own
  std::thread thread_;     // last: starts after everything above exists
};

}  // namespace inferscope
