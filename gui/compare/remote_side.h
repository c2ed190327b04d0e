// A server as one side of an A/B comparison: where it is, what the probe found there, and the run of
// the comparison's requests against it (run_remote_workload), as a local run's WorkloadResult.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/workload/workload_runner.h"
#include "core/remote/server_probe.h"
#include "core/sample/sampler.h"
#include "core/sched/request.h"

namespace inferscope::gui {

struct RemoteSide {
  RemoteEndpoint endpoint;      // model set (the probe's first when the user named none)
  ServerInfo server;            // what the probe found
  int32_t max_concurrency = 0;  // requests in flight at most (0: no limit)
};

// Sends each request's token ids at its arrival time, up to its max_output_tokens, with `sampling`;
// `cancel` ends the requests in flight and sends no more; `on_progress` from the client threads.
// Throws std::runtime_error with the first request's error when every request failed.
WorkloadResult run_remote_side(const RemoteSide& side, const std::vector<Request>& requests, const SamplingParams& sampling,
                               const std::atomic<bool>* cancel, std::function<void(int32_t done, int32_t total)> on_progress);

}  // namespace inferscope::gui
