// The engine front end for a remote server: the workbench's chat and dashboards drive it as they drive
// the local Engine (submit, cancel, the same callbacks, metrics snapshots). Each request streams on its
// own thread; the client's clock gives TTFT and inter-chunk latency, the server's usage the token
// counts; a poller scrapes /metrics into per-interval steps (throughput, queue, KV usage) and the
// totals, and names the dashboard panels the server cannot fill (EngineMetricsSnapshot::not_reported).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/engine/engine_metrics.h"
#include "core/engine/engine_request.h"
#include "core/engine/inference_engine.h"
#include "core/remote/engine_follower.h"
#include "core/remote/scrape_history.h"
#include "core/remote/remote_completion.h"
#include "core/remote/server_metrics.h"
#include "core/remote/server_probe.h"
#include "core/remote/server_slots.h"

namespace inferscope {

struct RemoteEngineOptions {
  double metrics_interval_s = 0.5;  // how often /metrics is scraped
  double latency_window_s = 10;     // the server's TTFT percentiles are over this much of the past
  RemoteTimeouts timeouts;
};

class RemoteEngine final : public InferenceEngine {
 public:
  RemoteEngine(RemoteEndpoint endpoint, ServerInfo server, EngineCallbacks callbacks, RemoteEngineOptions options = {});
  // Cancels what is in flight (each ends Aborted through the callbacks) and joins every thread.
  ~RemoteEngine() override;
  RemoteEngine(const RemoteEngine&) = delete;
  RemoteEngine& operator=(const RemoteEngine&) = delete;

  // Streams `request.messages` through /v1/chat/completions (or `prompt_tokens` / `prompt` through
  // /v1/completions) with its sampling and max_tokens (0: the server's limit); its stop strings are
  // the model's, which the server applies itself. Callbacks come from the request's thread: on_token
  // per chunk (token kRemoteChunk: servers stream text), on_reasoning for reasoning deltas, on_usage
  // with the server's counts, on_error
  // then on_finished(Failed) when the server or the network fails, on_finished(Aborted) after cancel().
  RequestId submit(EngineRequest request) override;
  // Closes the request's connection (the server aborts it); unknown or ended ids are ignored.
  void cancel(RequestId id) override;

  EngineMetricsSnapshot metrics_snapshot() const override;
  const RemoteEndpoint& endpoint() const { return endpoint_; }
  const ServerInfo& server() const { return server_; }
  // "llama.cpp at http://127.0.0.1:8080" (the model is endpoint().model).
  std::string source() const override;
  // The server runs its own configuration: false.
  bool set_config(EngineConfig /*config*/) override { return false; }
  // Another Inferscope's block table, asked of it now (it waits for the server's step in progress);
  // nullopt for other servers, whose tables are their own (kv_pool() and slot_states() say what they
  // state), and when the server does not answer.
  std::optional<KvSnapshot> kv_snapshot() override;
  // Whether the server is another Inferscope, whose engine is followed as if it ran here: its own
  // metrics snapshot (steps, requests, every number) polled from /inferscope/v1/metrics instead of
  // /metrics, and its block table from /inferscope/v1/kv.
  bool follows_engine() const { return server_.kind == ServerKind::Inferscope; }
  // The KV pool the server states (vLLM), as of the last scrape.
  std::optional<ServerKvPool> kv_pool() const;
  // llama-server's slots as of the last poll (empty for other servers, or with /slots disabled).
  std::vector<ServerSlot> slot_states() const;

 private:
  struct Stream {
    std::atomic<bool> cancel{false};
    std::thread thread;
  };
  void run_request(RequestId id, EngineRequest request, Stream& stream);
  void poll_metrics();
  // One poll: another Inferscope's snapshot since the last one (follows_engine()), or a /metrics
  // scrape (and llama-server's /slots).
  // Each throws what went wrong, naming the URL; the poller reports it and polls again later.
  void follow_engine();
  void scrape_metrics();
  // GET `path` of the server, with the endpoint's key, within the poll's timeout; throws HttpError.
  std::string get(const std::string& path) const;
  double now() const;
  void join_finished();

  RemoteEndpoint endpoint_;
  ServerInfo server_;
  EngineCallbacks callbacks_;
  RemoteEngineOptions options_;
  std::chrono::steady_clock::time_point start_;
  EngineMetrics metrics_;

  mutable std::mutex mu_;
  std::condition_variable stop_poll_;
  bool stopping_ = false;
  RequestId next_id_ = 0;
  std::map<RequestId, std::unique_ptr<Stream>> streams_;
  std::vector<RequestId> finished_;               // streams whose thread has ended, to join
  ScrapeHistory scrapes_;    // /metrics (not follows_engine())
  std::vector<ServerSlot> slots_;
  EngineFollower follower_;  // another Inferscope's engine (follows_engine())
  std::string poll_error_;   // why the last poll failed, and when the next comes ("" after one that worked)
  std::thread poller_;  // last: starts once everything it uses exists
};

}  // namespace inferscope
