// A server as one side of an A/B comparison: where it is, what the probe found there and how many
// requests it gets at once (core/remote/workload_target.h), and the run of the comparison's requests
// against it as a local run's WorkloadResult.
#pragma once
#include <vector>

#include "core/remote/workload_target.h"
#include "core/sched/request.h"

namespace inferscope::gui {

using RemoteSide = ServerWorkload;

// run_workload_on the server, with options' sampling, cancel and progress (from the client threads).
// Throws std::runtime_error with the first request's error when every request failed.
WorkloadResult run_remote_side(const RemoteSide& side, const std::vector<Request>& requests, const WorkloadRunOptions& options);

}  // namespace inferscope::gui
