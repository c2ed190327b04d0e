#include "gui/compare/remote_side.h"

#include <algorithm>
#include <stdexcept>

#include "core/remote/remote_workload.h"
#include "core/remote/remote_workload_result.h"

namespace inferscope::gui {

WorkloadResult run_remote_side(const RemoteSide& side, const std::vector<Request>& requests, const SamplingParams& sampling,
                               const std::atomic<bool>* cancel, std::function<void(int32_t done, int32_t total)> on_progress) {
  std::vector<RemoteWorkloadRequest> remote;
  for (const Request& r : requests) {
    remote.push_back({static_cast<int32_t>(r.id), r.arrival_s, std::vector<int32_t>(r.tokens.begin(), r.tokens.end()),
                      r.max_output_tokens});
  }
  RemoteWorkloadOptions options;
  options.sampling = sampling;
  options.max_concurrency = side.max_concurrency;
  options.cancel = cancel;
  options.on_progress = std::move(on_progress);
  const RemoteWorkloadResult result = run_remote_workload(side.endpoint, side.server.kind, remote, options);
  // Nothing answered (the server went away, refused every request): the comparison has no side B to show.
  const bool all_failed = std::all_of(result.requests.begin(), result.requests.end(),
                                      [](const RemoteRequestResult& r) { return r.reply.outcome == RemoteOutcome::Failed; });
  if (!result.requests.empty() && all_failed) throw std::runtime_error("every request failed: " + result.requests.front().reply.error);
  return workload_result_of(result, side.endpoint, side.server);
}

}  // namespace inferscope::gui
