// One scrape of a server's /metrics, with lookups by name and label, and the scrape-to-scrape
// quantities a client wants: counter rates and histogram increases (for percentiles over an interval).
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "core/remote/metric_family.h"

namespace inferscope {

class MetricSnapshot {
 public:
  explicit MetricSnapshot(std::vector<MetricFamily> families);
  // Parses a /metrics body (see parse_prometheus_text for its errors).
  static MetricSnapshot parse(std::string_view body);

  // The family named `name` (the name on its TYPE line, e.g. "vllm:prompt_tokens_total"), or nullptr.
  const MetricFamily* find(std::string_view name) const;

  // The sum of a counter's, gauge's or untyped metric's samples whose labels include all of `match`
  // (all samples when empty: e.g. across vLLM's engine or model_name labels). nullopt when there is no
  // such family or no sample matches; throws std::invalid_argument for a histogram or summary.
  std::optional<double> sum(std::string_view name, const Labels& match = {}) const;

  // A histogram's series whose labels include all of `match`, added bucket by bucket (their labels
  // become `match`). nullopt when there is no such family or no series matches; throws
  // std::invalid_argument when the family is not a histogram or the series' bounds differ.
  std::optional<HistogramSeries> histogram(std::string_view name, const Labels& match = {}) const;

  const std::vector<MetricFamily>& families() const { return families_; }

 private:
  const MetricFamily* find_typed(std::string_view name, bool want_histogram) const;

  std::vector<MetricFamily> families_;
};

// Per-second rate of a counter between two scrapes taken at the given times (seconds, any common
// origin), per series with counter resets handled (see counter_increase), summed over the series whose
// labels include `match`; a series new in `later` counts from 0. nullopt when `later` lacks the
// metric; throws std::invalid_argument unless later_time_s > earlier_time_s.
std::optional<double> counter_rate(const MetricSnapshot& earlier, double earlier_time_s, const MetricSnapshot& later,
                                   double later_time_s, std::string_view name, const Labels& match = {});

// What a histogram counted between two scrapes: per series increase (resets handled), added over the
// series whose labels include `match`; feed it to histogram_quantile for percentiles over the interval.
// nullopt when `later` lacks the metric.
std::optional<HistogramSeries> histogram_increase(const MetricSnapshot& earlier, const MetricSnapshot& later, std::string_view name,
                                                  const Labels& match = {});

}  // namespace inferscope
