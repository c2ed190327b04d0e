#include "gui/dashboard/not_reported.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/step_metrics.h"

namespace inferscope::gui {
namespace {

// Every dashboard panel by objectName, with what it shows; and the preemption marks the time charts
// draw (a server without a preemption counter draws none).
const std::array<std::pair<std::string_view, const char*>, 13> kQuantities = {{
    {"preemptions", "preemptions"},
    {"ttft", "time to first token"},
    {"latency", "request latencies"},
    {"decode_tokens_per_second", "decode throughput"},
    {"tokens_per_step", "tokens per step"},
    {"request_timeline", "per-request timings"},
    {"roofline", "FLOPs or bytes"},
    {"kv_usage", "KV usage"},
    {"kv_waste", "KV fragmentation or waste"},
    {"prefix_cache_hit_rate", "prefix-cache hits"},
    {"attention", "attention scratch or time"},
    {"spec_acceptance", "speculative acceptance"},
    {"spec_decode", "acceptance per draft position"},
}};

bool listed(const EngineMetricsSnapshot& s, std::string_view name) {
  return std::find(s.not_reported.begin(), s.not_reported.end(), name) != s.not_reported.end();
}

}  // namespace

QString reported_quantity(std::string_view panel) {
  const auto it = std::find_if(kQuantities.begin(), kQuantities.end(), [&](const auto& q) { return q.first == panel; });
  if (it == kQuantities.end())
    throw std::invalid_argument("not_reported: '" + std::string(panel) + "' is no dashboard panel (its plots' objectNames)");
  return QString::fromUtf8(it->second);
}

void check_not_reported(const EngineMetricsSnapshot& s) {
  for (const std::string& name : s.not_reported) {
    const auto& table = step_metrics_table();
    const bool line = std::any_of(table.begin(), table.end(),
                                  [&](const StepMetric& m) { return m.look != MetricLook::None && m.key == name; });
    if (!line) reported_quantity(name);
  }
}

bool line_not_reported(const EngineMetricsSnapshot& s, std::string_view key) { return listed(s, key); }

QString not_reported_note(const EngineMetricsSnapshot& s, std::string_view panel) {
  const QString quantity = reported_quantity(panel);
  const std::vector<std::string> lines = step_metrics_drawn_on(panel);
  // A panel that also draws step metrics its own way (the token bars) has more than its lines.
  const auto& table = step_metrics_table();
  const bool only_lines = std::none_of(table.begin(), table.end(), [&](const StepMetric& m) { return m.panel == panel && m.look == MetricLook::None; });
  const bool every_line = only_lines && !lines.empty() &&
                          std::all_of(lines.begin(), lines.end(), [&](const std::string& key) { return listed(s, key); });
  if (!listed(s, panel) && !every_line) return {};
  // Three short lines: a panel is as narrow as 240 pixels.
  // No source: the run was a dry run (gui/compare/simulated_side.h), which measures no attention.
  if (s.source.empty()) return QStringLiteral("a dry run does not measure\n%1").arg(quantity);
  return QString::fromStdString(s.source) + QStringLiteral(":\nthis server does not report\n") + quantity;
}

}  // namespace inferscope::gui
