// Where a workload's requests run: the engine core on a local model (run_workload: a real run, or the
// dry run's cost model with WorkloadRunOptions::dry_run) or a server, each request's token ids sent
// at its arrival time (run_remote_workload). Both give the WorkloadResult that serve-sim's report,
// Compare and Learn read.
#pragma once
#include <cstdint>
#include <variant>
#include <vector>

#include "core/engine/engine_config.h"
#include "core/remote/remote_endpoint.h"
#include "core/remote/server_probe.h"
#include "core/sched/request.h"
#include "core/workload/workload_runner.h"

namespace inferscope {

class LlamaModel;

struct LocalWorkload {
  const LlamaModel* model = nullptr;
  EngineConfig config;
};

struct ServerWorkload {
  RemoteEndpoint endpoint;          // model set (the probe's first when the user named none)
  ServerInfo server;                // what the probe found there
  int32_t max_concurrency = 0;      // requests in flight at most (0: no limit)
  double metrics_interval_s = 0.25;  // how often /metrics is scraped during the run
};

using WorkloadTarget = std::variant<LocalWorkload, ServerWorkload>;

// `requests` (as materialize_workload makes them) run on `target` with `options`. A server runs each
// request to its max_output_tokens with options.sampling, reports progress and honours cancel; it has
// no dry run, per-step hook or logits: options asking for them throw std::invalid_argument.
WorkloadResult run_workload_on(const WorkloadTarget& target, const std::vector<Request>& requests,
                               const WorkloadRunOptions& options = {});

}  // namespace inferscope
