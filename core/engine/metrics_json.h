// The engine's metrics snapshot as JSON and back: what --metrics-json writes, and what serve's
// /inferscope/v1/metrics sends a workbench attached to it, which reads it back into the snapshot its
// dashboards draw. Every step metric and snapshot number goes through its table (step_metrics.h,
// engine_metrics.h), so a metric added there is written and read with no change here.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "core/common/metric_unit.h"
#include "core/engine/engine_metrics.h"

namespace inferscope {

// Where serve answers with it (?after_s=T: only what came after T).
inline constexpr const char* kEngineMetricsPath = "/inferscope/v1/metrics";

nlohmann::json metrics_json(const EngineMetricsSnapshot& s);
// metrics_json's inverse for what it writes (the histograms, finished_by_reason and the attention
// and matmul totals are /metrics' alone, and stay empty). Throws std::runtime_error naming `where`
// and the field ("WHERE: steps[3]: field 'duration_s' is missing or has the wrong type").
EngineMetricsSnapshot metrics_from_json(const nlohmann::json& j, const std::string& where);
// A metric's value in JSON: a whole count as an integer (a mean of counts keeps its fraction).
nlohmann::json metric_json(double value, MetricUnit unit);
// spec_decode_num_drafts, _num_draft_tokens, _num_accepted_tokens, _num_accepted_tokens_per_pos,
// acceptance_rate and mean_acceptance_length.
nlohmann::json spec_json(const SpecDecodeCounters& c);

}  // namespace inferscope
