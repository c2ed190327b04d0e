// Another Inferscope's engine followed from its /inferscope/v1/metrics answers: each poll asks only for
// what came after the last step seen (after_s()), and take() merges that into the snapshot the
// workbench's dashboards draw, as if the engine ran here: the newest numbers, the recent steps in a
// window as long as the local engine's, and the requests (finished ones in the order they ended, then
// those in flight by id). A server that restarted (its uptime went back) is followed afresh.
#pragma once
#include <map>
#include <optional>
#include <vector>

#include "core/engine/engine_metrics.h"

namespace inferscope {

class EngineFollower {
 public:
  explicit EngineFollower(size_t step_window = EngineMetrics::kStepWindow, size_t finished_window = EngineMetrics::kFinishedWindow)
      : step_window_(step_window), finished_window_(finished_window) {}
  // The after_s to ask with: the last step's end (nullopt before the first answer: ask for everything).
  std::optional<double> after_s() const;
  // Merges one answer, asked with after_s() (or with nothing, for the first).
  void take(EngineMetricsSnapshot answer);
  // Everything followed so far, as the server's engine would give it.
  EngineMetricsSnapshot snapshot() const;

 private:
  size_t step_window_, finished_window_;
  std::optional<EngineMetricsSnapshot> latest_;  // the last answer's numbers (its lists moved out)
  std::vector<StepMetrics> steps_;               // oldest first, at most step_window_
  std::map<RequestId, RequestMetrics> finished_, live_;
};

}  // namespace inferscope
