// Every per-step metric, declared once: the StepMetrics field and its --metrics-json key, its unit,
// what it measures, and where the dashboard draws it (panel, axis, line name, colour, whether a
// comparison overlays run B's line). metrics_json and the dashboard walk this table: a new step
// metric is the code that measures it plus one row.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/metric_unit.h"
#include "core/engine/engine_metrics.h"

namespace inferscope {

// How the dashboard draws a row, or that its own view does (the request timeline, the roofline, the
// speculation panels, the stacked token bars): None.
enum class MetricLook { None, Line, Area };

struct StepMetric {
  std::string key{};  // the StepMetrics field and its --metrics-json key
  double (*value)(const StepMetrics&) = nullptr;
  MetricUnit unit{};
  std::string help{};  // what it measures
  // The dashboard: the panel (its plot's objectName), the right value axis or the left, the line's name
  // and colour (0xRRGGBB), and whether Compare draws run B's line over it.
  std::string panel{};
  bool right_axis = false;
  MetricLook look = MetricLook::None;
  std::string line{};
  uint32_t rgb = 0;
  bool overlay = false;
};

// Every step metric, in --metrics-json's order.
const std::vector<StepMetric>& step_metrics_table();
// The keys of the step metrics the dashboard draws as lines on `panel` (its plot's objectName).
std::vector<std::string> step_metrics_drawn_on(std::string_view panel);

}  // namespace inferscope
