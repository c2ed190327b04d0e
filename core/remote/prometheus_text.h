// Parser for the Prometheus text exposition format, version 0.0.4 (not OpenMetrics).
#pragma once
#include <string_view>
#include <vector>

#include "core/remote/metric_family.h"

namespace inferscope {

// The families of a /metrics body, in order of first appearance. `*_created` samples that go with a
// counter, histogram or summary (prometheus_client writes them as gauges) are left out. Throws
// std::runtime_error "metrics line N: WHAT: LINE" on malformed input, including a body whose last line
// has no newline (the text format requires one; a body cut mid-line would otherwise pass as a sample).
std::vector<MetricFamily> parse_prometheus_text(std::string_view body);

}  // namespace inferscope
