#include "gui/dashboard/roofline_series.h"

#include <algorithm>

namespace inferscope::gui {

double MachineRoofs::attainable(double intensity) const {
  return std::min(read_bytes_per_second * intensity, peak_flops_per_second);
}

std::vector<RooflinePoint> roofline_points(const EngineMetricsSnapshot& s) {
  std::vector<RooflinePoint> out;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const StepMetrics& step = s.steps[i];
    const double bytes = step.weight_bytes_read + step.kv_bytes_read;
    if (step.flops <= 0 || bytes <= 0 || step.duration_s <= 0) continue;
    out.push_back({step.flops / bytes, step.flops / step.duration_s, i, step.prefill_tokens > 0});
  }
  return out;
}

}  // namespace inferscope::gui
