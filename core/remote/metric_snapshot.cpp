#include "core/remote/metric_snapshot.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/remote/histogram_math.h"
#include "core/remote/prometheus_text.h"

namespace inferscope {

namespace {

bool labels_include(const Labels& labels, const Labels& match) {
  return std::all_of(match.begin(), match.end(), [&](const auto& m) {
    const auto it = labels.find(m.first);
    return it != labels.end() && it->second == m.second;
  });
}

// Adds up the histograms of `series` that match, relabelled as `match`.
std::optional<HistogramSeries> add_matching(const std::vector<HistogramSeries>& series, const Labels& match) {
  std::optional<HistogramSeries> total;
  for (const HistogramSeries& h : series) {
    if (!labels_include(h.labels, match)) continue;
    total = total ? add_histograms(*total, h) : h;
  }
  if (total) total->labels = match;
  return total;
}

}  // namespace

MetricSnapshot::MetricSnapshot(std::vector<MetricFamily> families) : families_(std::move(families)) {}

MetricSnapshot MetricSnapshot::parse(std::string_view body) { return MetricSnapshot(parse_prometheus_text(body)); }

const MetricFamily* MetricSnapshot::find(std::string_view name) const {
  const auto it = std::find_if(families_.begin(), families_.end(), [&](const MetricFamily& f) { return f.name == name; });
  return it == families_.end() ? nullptr : &*it;
}

const MetricFamily* MetricSnapshot::find_typed(std::string_view name, bool want_histogram) const {
  const MetricFamily* family = find(name);
  if (!family) return nullptr;
  const bool is_histogram = family->type == MetricType::Histogram;
  const bool has_samples = !is_histogram && family->type != MetricType::Summary;
  if (want_histogram ? !is_histogram : !has_samples) {
    throw std::invalid_argument("metric " + std::string(name) + " is a " + metric_type_name(family->type) + ", not " +
                                (want_histogram ? "a histogram" : "a counter, gauge or untyped metric"));
  }
  return family;
}

std::optional<double> MetricSnapshot::sum(std::string_view name, const Labels& match) const {
  const MetricFamily* family = find_typed(name, false);
  if (!family) return std::nullopt;
  std::optional<double> total;
  for (const MetricSample& s : family->samples) {
    if (labels_include(s.labels, match)) total = total.value_or(0) + s.value;
  }
  return total;
}

std::optional<HistogramSeries> MetricSnapshot::histogram(std::string_view name, const Labels& match) const {
  const MetricFamily* family = find_typed(name, true);
  return family ? add_matching(family->histograms, match) : std::nullopt;
}

std::optional<double> counter_rate(const MetricSnapshot& earlier, double earlier_time_s, const MetricSnapshot& later,
                                   double later_time_s, std::string_view name, const Labels& match) {
  if (!(later_time_s > earlier_time_s)) {
    throw std::invalid_argument("counter rate of " + std::string(name) + ": the later scrape's time must be after the earlier one's");
  }
  if (!later.sum(name, match)) return std::nullopt;
  const MetricFamily* before = earlier.find(name);
  double increase = 0;
  for (const MetricSample& s : later.find(name)->samples) {
    if (!labels_include(s.labels, match)) continue;
    double previous = 0;  // a series new since the earlier scrape started from 0
    if (before) {
      const auto it = std::find_if(before->samples.begin(), before->samples.end(), [&](const MetricSample& b) { return b.labels == s.labels; });
      if (it != before->samples.end()) previous = it->value;
    }
    increase += counter_increase(previous, s.value);
  }
  return increase / (later_time_s - earlier_time_s);
}

std::optional<HistogramSeries> histogram_increase(const MetricSnapshot& earlier, const MetricSnapshot& later, std::string_view name,
                                                  const Labels& match) {
  if (!later.histogram(name, match)) return std::nullopt;
  const MetricFamily* before = earlier.find(name);
  std::vector<HistogramSeries> increases;
  for (const HistogramSeries& h : later.find(name)->histograms) {
    if (!labels_include(h.labels, match)) continue;
    const HistogramSeries* previous = nullptr;
    if (before) {
      const auto it = std::find_if(before->histograms.begin(), before->histograms.end(), [&](const HistogramSeries& b) { return b.labels == h.labels; });
      if (it != before->histograms.end()) previous = &*it;
    }
    increases.push_back(previous ? histogram_increase(*previous, h) : h);
  }
  return add_matching(increases, match);
}

}  // namespace inferscope
