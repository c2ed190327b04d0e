#include "core/remote/histogram_math.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace inferscope {

namespace {

// Combines two histograms bucket by bucket with `op`, after checking their bounds match.
template <typename Op>
HistogramSeries combine(const HistogramSeries& a, const HistogramSeries& b, const char* what, Op op) {
  const bool same_bounds = std::equal(a.buckets.begin(), a.buckets.end(), b.buckets.begin(), b.buckets.end(),
                                      [](const HistogramBucket& x, const HistogramBucket& y) { return x.upper_bound == y.upper_bound; });
  if (!same_bounds) throw std::invalid_argument(std::string(what) + ": the two histograms have different bucket bounds");
  HistogramSeries out = a;
  for (size_t i = 0; i < out.buckets.size(); ++i) out.buckets[i].cumulative_count = op(a.buckets[i].cumulative_count, b.buckets[i].cumulative_count);
  out.sum = op(a.sum, b.sum);
  out.count = op(a.count, b.count);
  return out;
}

}  // namespace

double counter_increase(double earlier, double later) { return later < earlier ? later : later - earlier; }

HistogramSeries histogram_increase(const HistogramSeries& earlier, const HistogramSeries& later) {
  HistogramSeries out = combine(earlier, later, "histogram increase", counter_increase);
  out.labels = later.labels;
  return out;
}

HistogramSeries add_histograms(const HistogramSeries& a, const HistogramSeries& b) {
  return combine(a, b, "adding histograms", [](double x, double y) { return x + y; });
}

double histogram_quantile(double q, const HistogramSeries& h) {
  if (std::isnan(q)) return q;
  if (q < 0) return -std::numeric_limits<double>::infinity();
  if (q > 1) return std::numeric_limits<double>::infinity();
  const auto& buckets = h.buckets;
  if (buckets.size() < 2 || !std::isinf(buckets.back().upper_bound)) return std::numeric_limits<double>::quiet_NaN();
  // Counts read from separate lines can be slightly out of order; treat them as non-decreasing.
  std::vector<double> counts;
  for (const HistogramBucket& b : buckets) counts.push_back(std::max(b.cumulative_count, counts.empty() ? 0.0 : counts.back()));
  const double observations = counts.back();
  if (observations <= 0) return std::numeric_limits<double>::quiet_NaN();
  double rank = q * observations;
  // The first finite bucket whose cumulative count reaches the rank; past them all is the +Inf bucket.
  const size_t finite = buckets.size() - 1;
  const size_t b = std::lower_bound(counts.begin(), counts.begin() + static_cast<long>(finite), rank) - counts.begin();
  if (b == finite) return buckets[finite - 1].upper_bound;
  if (b == 0 && buckets[0].upper_bound <= 0) return buckets[0].upper_bound;
  const double start = b == 0 ? 0.0 : buckets[b - 1].upper_bound;
  double in_bucket = counts[b];
  if (b > 0) {
    in_bucket -= counts[b - 1];
    rank -= counts[b - 1];
  }
  return start + (buckets[b].upper_bound - start) * (rank / in_bucket);
}

}  // namespace inferscope
