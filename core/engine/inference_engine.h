// What a front end drives: the local Engine or a remote server's RemoteEngine alike. Requests go in;
// tokens, errors and each request's end come back through the EngineCallbacks the engine was built
// with; metrics come as snapshots. Every call is thread-safe and returns at once (kv_snapshot() may
// wait one step).
#pragma once
#include <optional>
#include <string>

#include "core/engine/engine_config.h"
#include "core/engine/engine_metrics.h"
#include "core/engine/engine_request.h"
#include "core/kv/kv_cache.h"

namespace inferscope {

class InferenceEngine {
 public:
  virtual ~InferenceEngine() = default;
  // Queues a request; a bad one ends through the callbacks.
  virtual RequestId submit(EngineRequest request) = 0;
  // Ends a request (on_finished(Aborted)); unknown or ended ids are ignored.
  virtual void cancel(RequestId id) = 0;
  virtual EngineMetricsSnapshot metrics_snapshot() const = 0;
  // Where it runs: "" for the local engine, else the server ("llama.cpp at http://127.0.0.1:8080").
  virtual std::string source() const = 0;
  // Applies `config` between steps, on_config saying what happened. False, with no answer, where
  // the configuration is not ours to set (a server runs its own).
  virtual bool set_config(EngineConfig config) = 0;
  // The block table between steps; nullopt where there is none to show (a server's is its own).
  virtual std::optional<KvSnapshot> kv_snapshot() = 0;
};

}  // namespace inferscope
