// Replays a serving workload against a server: each request is sent at its arrival time (or when a
// client slot frees up, with a concurrency limit) as a streamed /v1/completions of its token ids, and
// the server's /metrics is scraped before, during (gauges, at an interval) and after the run.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/remote/remote_completion.h"
#include "core/remote/server_metrics.h"
#include "core/sample/sampler.h"

namespace inferscope {

struct RemoteWorkloadRequest {
  int32_t id = 0;
  double arrival_s = 0;          // seconds after the start of the run
  std::vector<int32_t> prompt;   // token ids
  int32_t max_tokens = 1;
};

struct RemoteRequestResult {
  int32_t id = 0;
  double arrival_s = 0;
  double sent_s = 0;             // when the client sent it (later than arrival_s while all slots were busy)
  RemoteReply reply;             // its timing counts from sent_s
};

struct ServerSample {
  double time_s = 0;             // seconds after the start of the run
  ServerGauges gauges;
};

struct RemoteWorkloadResult {
  double duration_s = 0;                       // first arrival to last answer
  std::vector<RemoteRequestResult> requests;   // by id
  std::optional<ServerCounters> counters;      // the increase over the run, when /metrics answered at both ends
  std::vector<ServerSample> samples;           // the gauges scraped during the run
  std::string metrics_error;                   // why /metrics gave nothing (empty when it answered)
};

struct RemoteWorkloadOptions {
  SamplingParams sampling;         // every request's (ignore_eos: run each to its max_tokens)
  int32_t max_concurrency = 0;     // requests in flight at most (0: no limit)
  double metrics_interval_s = 0.25;
  RemoteTimeouts timeouts;
  const std::atomic<bool>* cancel = nullptr;          // true: requests in flight are cancelled, the rest not sent
  std::function<void(int32_t done, int32_t total)> on_progress;  // from the client threads, serialised
};

RemoteWorkloadResult run_remote_workload(const RemoteEndpoint& endpoint, ServerKind kind,
                                         const std::vector<RemoteWorkloadRequest>& requests,
                                         const RemoteWorkloadOptions& options = {});

}  // namespace inferscope
