// Metric families as read from a Prometheus /metrics body: counters, gauges and untyped metrics as
// samples; histograms and summaries grouped into one series per label set.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace inferscope {

enum class MetricType { Counter, Gauge, Histogram, Summary, Untyped };

using Labels = std::map<std::string, std::string>;

// One line of a counter, gauge or untyped family.
struct MetricSample {
  Labels labels;
  double value = 0;
  std::optional<int64_t> timestamp_ms;
};

struct HistogramBucket {
  double upper_bound = 0;  // the `le` label; the last bucket's is +Inf
  double cumulative_count = 0;
};

// One histogram: its _bucket lines (sorted by upper bound, ending with +Inf), _sum and _count.
struct HistogramSeries {
  Labels labels;  // without `le`
  std::vector<HistogramBucket> buckets;
  double sum = 0;    // NaN when the body had no _sum line for it
  double count = 0;  // the +Inf bucket's count when the body had no _count line
};

struct SummaryQuantile {
  double quantile = 0;
  double value = 0;
};

// One summary: its quantile lines (sorted by quantile), _sum and _count.
struct SummarySeries {
  Labels labels;  // without `quantile`
  std::vector<SummaryQuantile> quantiles;
  double sum = 0;    // NaN when absent
  double count = 0;  // NaN when absent
};

struct MetricFamily {
  std::string name;
  std::string help;
  MetricType type = MetricType::Untyped;
  std::vector<MetricSample> samples;       // counter, gauge, untyped
  std::vector<HistogramSeries> histograms;  // histogram
  std::vector<SummarySeries> summaries;     // summary
};

const char* metric_type_name(MetricType type);

}  // namespace inferscope
