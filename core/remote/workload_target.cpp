#include "core/remote/workload_target.h"

#include <stdexcept>

#include "core/remote/remote_workload.h"
#include "core/remote/remote_workload_result.h"

namespace inferscope {
namespace {

WorkloadResult run_on_server(const ServerWorkload& target, const std::vector<Request>& requests,
                             const WorkloadRunOptions& options) {
  if (options.dry_run || options.after_step || options.keep_logits) {
    throw std::invalid_argument("a server runs its own engine: no dry run, per-step hook or logits from it");
  }
  std::vector<RemoteWorkloadRequest> remote;
  for (const Request& r : requests) {
    remote.push_back({static_cast<int32_t>(r.id), r.arrival_s, std::vector<int32_t>(r.tokens.begin(), r.tokens.end()),
                      r.max_output_tokens});
  }
  RemoteWorkloadOptions run;
  run.sampling = options.sampling;
  run.max_concurrency = target.max_concurrency;
  run.metrics_interval_s = target.metrics_interval_s;
  run.cancel = options.cancel;
  run.on_progress = options.on_progress;
  return workload_result_of(run_remote_workload(target.endpoint, target.server.kind, remote, run), target.endpoint,
                            target.server);
}

}  // namespace

WorkloadResult run_workload_on(const WorkloadTarget& target, const std::vector<Request>& requests,
                               const WorkloadRunOptions& options) {
  if (const auto* local = std::get_if<LocalWorkload>(&target)) return run_workload(*local->model, local->config, requests, options);
  return run_on_server(std::get<ServerWorkload>(target), requests, options);
}

}  // namespace inferscope
