// Arithmetic on counters and histograms between two scrapes, as Prometheus' increase() and
// histogram_quantile() do it.
#pragma once
#include "core/remote/metric_family.h"

namespace inferscope {

// How much a counter grew from `earlier` to `later`; a drop means the counter was reset (the server
// restarted), so all of `later` counts as growth.
double counter_increase(double earlier, double later);

// Bucket by bucket (and sum and count) increase from `earlier` to `later`, each a counter as above.
// Throws std::invalid_argument when the two have different bucket bounds.
HistogramSeries histogram_increase(const HistogramSeries& earlier, const HistogramSeries& later);

// Bucket by bucket sum of two histograms with the same bounds (throws std::invalid_argument if not);
// the result keeps `a`'s labels.
HistogramSeries add_histograms(const HistogramSeries& a, const HistogramSeries& b);

// The q-quantile (0 <= q <= 1) of the observations counted in `h`'s buckets, interpolating linearly
// inside the bucket the rank falls in (the first bucket starts at 0). As histogram_quantile: NaN
// without observations or with fewer than two buckets; the highest finite bound when the rank falls in
// the +Inf bucket; -Inf for q < 0 and +Inf for q > 1.
double histogram_quantile(double q, const HistogramSeries& h);

}  // namespace inferscope
