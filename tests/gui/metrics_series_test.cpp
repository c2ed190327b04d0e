// The dashboard's series from a known snapshot: TTFT points at first-token times in time order,
// the smoothed decode rate and every per-step line with a gap (a NaN point) over idle time, bars
// without, the idle threshold from the median step, the time span, and the prefix-hit and
// preemption histories kept across updates; a log axis's tick labels in its unit.
#include <gtest/gtest.h>

#include <cmath>

#include "gui/dashboard/metrics_series.h"
#include "gui/plot/plot_units.h"
#include "tests/gui/synthetic_metrics.h"

namespace inferscope::gui::test {
namespace {

// A log axis in seconds reads its decades as times; one in counts by SI prefix.
class LogTicks : public LogUnitTicker {
 public:
  using LogUnitTicker::LogUnitTicker;
  QString label(double tick) { return getTickLabel(tick, QLocale(), 'g', 3); }
};

TEST(PlotUnits, LogAxesLabelTheirDecadesInTheirUnit) {
  LogTicks seconds(Unit::Seconds), count(Unit::Count);
  EXPECT_EQ(seconds.label(1e-1), "100 ms");
  EXPECT_EQ(seconds.label(1e-5), "10.0 µs");
  EXPECT_EQ(seconds.label(2), "2.00 s");
  EXPECT_EQ(count.label(1e9), "1 G");
}

TEST(MetricsSeries, TtftPointsSitAtFirstTokenTimesInTimeOrder) {
  const Series s = ttft_series(synthetic_snapshot());
  ASSERT_EQ(s.x.size(), 2);  // the queued request has no first token yet
  EXPECT_DOUBLE_EQ(s.x[0], 0.98 + 0.03);
  EXPECT_DOUBLE_EQ(s.y[0], 0.03);
  EXPECT_EQ(s.ids[0], 0);
  EXPECT_DOUBLE_EQ(s.x[1], 0.99 + 0.05);
  EXPECT_DOUBLE_EQ(s.y[1], 0.05);
  EXPECT_EQ(s.ids[1], 1);
}

TEST(MetricsSeries, LatencyPointsSitWhereEachRequestReachedThem) {
  EngineMetricsSnapshot snap = synthetic_snapshot();
  // Request 0 finishes after 4 output tokens (gaps 10, 30, 20 ms); request 1 is still decoding.
  snap.requests[1].e2e_request_latency_seconds = 0.12;
  snap.requests[1].inter_token_latency_seconds = {0.01, 0.03, 0.02};
  snap.requests[1].request_queue_time_seconds = 0.005;
  snap.requests[0].inter_token_latency_seconds = {0.05};
  const Series queue = queue_time_series(snap);
  ASSERT_EQ(queue.x.size(), 2);  // the queued request is not scheduled yet
  EXPECT_DOUBLE_EQ(queue.x[0], 0.98 + 0.005);
  EXPECT_DOUBLE_EQ(queue.y[0], 0.005);
  EXPECT_EQ(queue.ids[0], 0);
  EXPECT_DOUBLE_EQ(queue.x[1], 0.99 + 0.01);
  EXPECT_EQ(queue.ids[1], 1);
  const Series e2e = e2e_series(snap);
  ASSERT_EQ(e2e.x.size(), 1);
  EXPECT_DOUBLE_EQ(e2e.x[0], 0.98 + 0.12);
  EXPECT_DOUBLE_EQ(e2e.y[0], 0.12);
  EXPECT_EQ(e2e.ids[0], 0);
  const Series itl = median_itl_series(snap);
  ASSERT_EQ(itl.x.size(), 1);  // request 1 has gaps but has not finished
  EXPECT_DOUBLE_EQ(itl.x[0], 0.98 + 0.12);
  EXPECT_DOUBLE_EQ(itl.y[0], 0.02);
}

TEST(MetricsSeries, DecodeRateAveragesRecentStepsAndBreaksAtIdleGaps) {
  const EngineMetricsSnapshot snap = synthetic_snapshot();
  const Series s = decode_rate_series(snap);
  ASSERT_EQ(s.x.size(), kFirstStretch + kSecondStretch + 1);  // one NaN point marks the gap
  EXPECT_DOUBLE_EQ(s.y[0], 0);                                // a prefill-only step decodes nothing
  EXPECT_NEAR(s.y[1], 2 / 0.020, 1e-9);                       // (0 + 2 tokens) / 20 ms
  EXPECT_NEAR(s.y[5], 8 / 0.040, 1e-9);                       // the window: 4 steps of 2 tokens
  EXPECT_TRUE(std::isnan(s.y[kFirstStretch]));
  EXPECT_DOUBLE_EQ(s.x[kFirstStretch], snap.steps[kFirstStretch - 1].time_s);
  // After the gap the window restarts: the second stretch's prefill step alone.
  EXPECT_DOUBLE_EQ(s.y[kFirstStretch + 1], 0);
  EXPECT_NEAR(s.y[kFirstStretch + 2], 2 / 0.020, 1e-9);
  for (int i = 1; i < s.x.size(); ++i) EXPECT_LE(s.x[i - 1], s.x[i]) << "sorted for setData(alreadySorted)";
}

TEST(MetricsSeries, StepSeriesBreakAtIdleGapsAndBarsDoNot) {
  const EngineMetricsSnapshot snap = synthetic_snapshot();
  const Series usage = step_series(snap, [](const StepMetrics& m) { return m.kv_cache_usage_perc; });
  ASSERT_EQ(usage.x.size(), kFirstStretch + kSecondStretch + 1);  // one NaN point in the ~1.9 s gap
  EXPECT_DOUBLE_EQ(usage.x[0], 1.01);
  EXPECT_DOUBLE_EQ(usage.y[3], 0.08);
  for (int i = 0; i < usage.y.size(); ++i) EXPECT_EQ(std::isnan(usage.y[i]), i == kFirstStretch) << i;
  EXPECT_DOUBLE_EQ(usage.x[kFirstStretch], snap.steps[kFirstStretch - 1].time_s) << "the line ends where the last step did";
  EXPECT_DOUBLE_EQ(usage.y[kFirstStretch + 1], 0.05) << "and starts again with the next stretch";
  for (int i = 1; i < usage.x.size(); ++i) EXPECT_LE(usage.x[i - 1], usage.x[i]) << "sorted for setData(alreadySorted)";
  const Series bars = step_bars(snap, [](const StepMetrics& m) { return double(m.prefill_tokens); });
  ASSERT_EQ(bars.x.size(), kFirstStretch + kSecondStretch);
  for (double y : bars.y) EXPECT_FALSE(std::isnan(y));
  // Drafting steps only: the gap between the stretches still breaks the line.
  const Series drafting = drafting_step_series(synthetic_spec_snapshot(), [](const StepMetrics& m) { return m.draft_seconds; });
  ASSERT_EQ(drafting.x.size(), kFirstStretch + kSecondStretch - 2 + 1);
  EXPECT_TRUE(std::isnan(drafting.y[kFirstStretch - 1]));
}

TEST(MetricsSeries, TheIdleThresholdGrowsWithTheMedianStep) {
  EngineMetricsSnapshot snap = synthetic_snapshot();
  EXPECT_DOUBLE_EQ(median_step_seconds(snap), 0.010);
  EXPECT_DOUBLE_EQ(idle_gap_seconds(snap), kIdleGapSeconds);  // 5 x 10 ms is below the floor
  // Steps of a second each: the same ~1.9 s gap is under 5 median steps, so the engine was busy.
  for (StepMetrics& step : snap.steps) step.duration_s = 1.0;
  snap.steps[kFirstStretch].time_s = snap.steps[kFirstStretch - 1].time_s + 1.0 + 1.9;
  EXPECT_DOUBLE_EQ(idle_gap_seconds(snap), kIdleGapMedianSteps * 1.0);
  const Series busy = step_series(snap, [](const StepMetrics& m) { return m.kv_cache_usage_perc; });
  for (double y : busy.y) EXPECT_FALSE(std::isnan(y));
  EXPECT_EQ(busy.x.size(), snap.steps.size());
  EXPECT_DOUBLE_EQ(median_step_seconds(EngineMetricsSnapshot{}), 0.01);
}

TEST(MetricsSeries, TimeSpan) {
  const EngineMetricsSnapshot snap = synthetic_snapshot();
  const auto [lo, hi] = time_span(snap);
  EXPECT_DOUBLE_EQ(lo, 1.0);  // the start of the first step
  EXPECT_DOUBLE_EQ(hi, snap.steps.back().time_s);
  EXPECT_EQ(time_span(EngineMetricsSnapshot{}), std::make_pair(0.0, 0.0));
}

TEST(MetricsSeries, PrefixHitHistoryKeepsCumulativeAndRecentRates) {
  PrefixHitHistory h;
  h.add(1.0, 0, 0);  // nothing looked up yet: no point
  EXPECT_TRUE(h.cumulative().x.isEmpty());
  h.add(2.0, 100, 10);
  h.add(2.5, 100, 10);  // unchanged totals: no new point
  h.add(3.0, 200, 90);
  ASSERT_EQ(h.cumulative().x.size(), 2);
  EXPECT_DOUBLE_EQ(h.cumulative().y[0], 0.10);
  EXPECT_DOUBLE_EQ(h.cumulative().y[1], 0.45);
  EXPECT_DOUBLE_EQ(h.interval().y[1], 0.80);  // 80 hits of the last 100 queries
  h.add(4.0, 50, 50);  // a new cache restarted the counters: its rates, the history kept
  // The lines break between the two caches (the time between may have had no prefix cache at all).
  ASSERT_EQ(h.cumulative().x.size(), 4);
  EXPECT_TRUE(std::isnan(h.cumulative().y[2]));
  EXPECT_TRUE(std::isnan(h.interval().y[2]));
  EXPECT_DOUBLE_EQ(h.cumulative().y[3], 1.0);
  EXPECT_DOUBLE_EQ(h.interval().y[3], 1.0);
}

TEST(MetricsSeries, PreemptionHistoryMarksRises) {
  PreemptionHistory h;
  EXPECT_FALSE(h.add(1.0, 0));
  EXPECT_TRUE(h.add(2.0, 3));
  EXPECT_FALSE(h.add(2.5, 3));
  EXPECT_TRUE(h.add(3.0, 4));
  ASSERT_EQ(h.times().size(), 2);
  EXPECT_DOUBLE_EQ(h.times()[0], 2.0);
  EXPECT_EQ(h.counts()[0], 3);
  EXPECT_EQ(h.counts()[1], 1);
  for (int i = 0; i < PreemptionHistory::kMaxMarks + 10; ++i) h.add(4.0 + i, 5 + i);
  EXPECT_EQ(h.times().size(), PreemptionHistory::kMaxMarks);  // bounded
}

}  // namespace
}  // namespace inferscope::gui::test
