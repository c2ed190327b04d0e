#include "gui/compare/remote_side.h"

#include <algorithm>
#include <stdexcept>

namespace inferscope::gui {

WorkloadResult run_remote_side(const RemoteSide& side, const std::vector<Request>& requests, const WorkloadRunOptions& options) {
  WorkloadResult result = run_workload_on(side, requests, options);
  // Nothing answered (the server went away, refused every request): the comparison has no side B to show.
  const bool all_failed = std::all_of(result.outputs.begin(), result.outputs.end(),
                                      [](const WorkloadOutput& o) { return o.finish_reason == "error"; });
  if (!result.outputs.empty() && all_failed) throw std::runtime_error("every request failed: " + result.outputs.front().error);
  return result;
}

}  // namespace inferscope::gui
