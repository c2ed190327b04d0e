// A remote workload run (run_remote_workload) as the WorkloadResult a local run gives, so that what
// reads local runs (the A/B comparison, its table and charts) reads a server's too: per-request
// metrics on the client's clock counted from arrival, token counts from the server's usage, a step
// per gauge sample, totals from the server's counters, and the panels it cannot fill named.
#pragma once
#include "core/workload/workload_runner.h"
#include "core/remote/remote_workload.h"
#include "core/remote/server_probe.h"

namespace inferscope {

// One request's metrics: TTFT and e2e latency from its arrival (the client's wait for a free slot
// included, as the local engine counts queueing), chunk gaps as inter-token latencies, token counts
// from usage (0 when the server sent none), the finish reason in vLLM's names.
RequestMetrics request_metrics_of(const RemoteRequestResult& request);

// `result` from `endpoint` (the server `server` answered there). Outputs carry the streamed text and
// no token ids (servers stream text); metrics.source names the server and metrics.not_reported the
// panels it cannot fill; `config` stays the default (a server's settings are its own).
WorkloadResult workload_result_of(const RemoteWorkloadResult& result, const RemoteEndpoint& endpoint, const ServerInfo& server);

}  // namespace inferscope
