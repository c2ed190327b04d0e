// The roofline: each step's point is its intensity (FLOPs / bytes of weights + K/V read) and its
// achieved FLOP/s (FLOPs / duration), prefill and decode-only steps apart; the two roofs meet at
// peak / bandwidth; "measuring the machine…" until the roofs come; hover names a step's numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <qcustomplot.h>

#include "gui/dashboard/roofline_view.h"
#include "gui/plot/plot_units.h"
#include "tests/gui/offscreen_app.h"
#include "tests/gui/synthetic_metrics.h"

namespace inferscope::gui::test {
namespace {

const MachineRoofs kRoofs{100e9, 10e9};  // 100 GFLOP/s, 10 GB/s: the ridge at 10 FLOP/B

using Point = std::pair<double, double>;  // intensity, FLOP/s

std::vector<Point> points_of(const QCPGraph* g) {
  std::vector<Point> out;
  for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) out.emplace_back(it->key, it->value);
  return out;
}

// What each step of `s` must plot as, prefill steps or the others, sorted.
std::vector<Point> expected_points(const EngineMetricsSnapshot& s, bool prefill) {
  std::vector<Point> out;
  for (const StepMetrics& step : s.steps)
    if ((step.prefill_tokens > 0) == prefill)
      out.emplace_back(step.flops / (step.weight_bytes_read + step.kv_bytes_read), step.flops / step.duration_s);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RooflineSeries, PointsAreEachStepsIntensityAndFlopRate) {
  const EngineMetricsSnapshot snap = synthetic_snapshot();
  const std::vector<RooflinePoint> points = roofline_points(snap);
  ASSERT_EQ(points.size(), snap.steps.size());
  // Step 3 of the first stretch: 2 decode tokens, 1e6 weight bytes + 4000 K/V bytes, 10 ms.
  EXPECT_DOUBLE_EQ(points[3].intensity, 2 * kFlopsPerToken / (kWeightBytes + 4 * kKvBytesPerIndex));
  EXPECT_DOUBLE_EQ(points[3].flops_per_second, 2 * kFlopsPerToken / 0.010);
  EXPECT_FALSE(points[3].prefill);
  EXPECT_TRUE(points[0].prefill);
  EXPECT_EQ(points[3].step, 3u);
  // A step that counted no cost (a dry run's) has no point.
  EngineMetricsSnapshot dry = snap;
  dry.steps[1].flops = 0;
  EXPECT_EQ(roofline_points(dry).size(), snap.steps.size() - 1);
  EXPECT_DOUBLE_EQ(kRoofs.ridge_intensity(), 10);
  EXPECT_DOUBLE_EQ(kRoofs.attainable(2), 20e9);   // memory-bound: bandwidth x intensity
  EXPECT_DOUBLE_EQ(kRoofs.attainable(50), 100e9);  // compute-bound: the peak
}

struct Roofline : ::testing::Test {
  Roofline() {
    view.resize(640, 360);
    view.show();
  }
  QApplication& app = offscreen_app();
  RooflineView view;
};

TEST_F(Roofline, SaysItIsMeasuringUntilTheRoofsCome) {
  EXPECT_EQ(view.note(), "measuring the machine…");
  view.update_from(synthetic_snapshot());
  EXPECT_EQ(view.note(), "measuring the machine…") << "steps without roofs are not a roofline yet";
  view.set_roofs(kRoofs);
  EXPECT_EQ(view.note(), "");
  view.clear();
  EXPECT_EQ(view.note(), "waiting for the first engine step");
  EXPECT_EQ(view.memory_roof->dataCount(), 2) << "the roofs are the machine's: clear() keeps them";
}

TEST_F(Roofline, RoofsMeetAtPeakOverBandwidth) {
  view.set_roofs(kRoofs);
  const double ridge = 100e9 / 10e9;
  ASSERT_EQ(view.memory_roof->dataCount(), 2);
  ASSERT_EQ(view.compute_roof->dataCount(), 2);
  const auto memory = points_of(view.memory_roof), compute = points_of(view.compute_roof);
  EXPECT_DOUBLE_EQ(memory.back().first, ridge);
  EXPECT_DOUBLE_EQ(memory.back().second, 100e9);
  EXPECT_DOUBLE_EQ(compute.front().first, ridge);
  EXPECT_DOUBLE_EQ(compute.front().second, 100e9);
  EXPECT_DOUBLE_EQ(memory.front().second, 10e9 * memory.front().first) << "y = bandwidth x intensity";
  EXPECT_DOUBLE_EQ(compute.back().second, 100e9) << "flat at the peak";
  EXPECT_EQ(view.ridge_label->text(), "ridge 10.0 FLOP/B");
  EXPECT_DOUBLE_EQ(view.ridge_label->position->key(), ridge);
  EXPECT_DOUBLE_EQ(view.ridge_label->position->value(), 100e9);
  EXPECT_EQ(view.xAxis->scaleType(), QCPAxis::stLogarithmic);
  EXPECT_EQ(view.yAxis->scaleType(), QCPAxis::stLogarithmic);
  EXPECT_EQ(view.memory_roof->name(), "memory roof: 10.0 GB/s");
  EXPECT_EQ(view.compute_roof->name(), "compute roof: 100 GFLOP/s");
}

TEST_F(Roofline, EveryStepIsAPointAtItsIntensityAndFlopRate) {
  view.set_roofs(kRoofs);
  const EngineMetricsSnapshot snap = synthetic_snapshot();
  view.update_from(snap);
  EXPECT_EQ(points_of(view.prefill), expected_points(snap, true));
  EXPECT_EQ(points_of(view.decode), expected_points(snap, false));
  EXPECT_EQ(view.prefill->dataCount(), 2);
  EXPECT_EQ(view.decode->dataCount(), kFirstStretch + kSecondStretch - 2);
  // Every point is on screen, under the roofs.
  for (const QCPGraph* g : {view.prefill, view.decode})
    for (const Point& p : points_of(g)) {
      EXPECT_TRUE(view.xAxis->range().contains(p.first));
      EXPECT_TRUE(view.yAxis->range().contains(p.second));
    }

  view.replot(QCustomPlot::rpImmediateRefresh);
  const QPointF at = view.prefill->dataPixelPosition(0);
  const QString text = view.hover_at(at + QPointF(2, 1));
  EXPECT_TRUE(text.startsWith("prefill step at t = 1.010 s")) << text.toStdString();
  EXPECT_TRUE(text.contains("32 prefill + 0 decode tokens · 2 requests")) << text.toStdString();
  EXPECT_TRUE(text.contains("64.0 MFLOP in 10.0 ms: 6.40 GFLOP/s")) << text.toStdString();
  EXPECT_TRUE(text.contains("6% of the roof here (compute-bound: right of the ridge)")) << text.toStdString();
  const QString decode = view.hover_at(view.decode->dataPixelPosition(0));
  EXPECT_TRUE(decode.contains("(memory-bound: left of the ridge)")) << decode.toStdString();
  EXPECT_TRUE(view.hover_at(at + QPointF(0, 80)).isEmpty()) << "away from every point";
  EXPECT_GT(distinct_colors(render(view, "roofline")), 8);
}

TEST_F(Roofline, OverlayDrawsASecondRunsSteps) {
  view.set_roofs(kRoofs);
  view.update_from(synthetic_snapshot());
  EngineMetricsSnapshot b = synthetic_snapshot();
  b.steps.resize(kFirstStretch);
  view.set_overlay(&b);
  EXPECT_TRUE(view.decode_b->visible());
  EXPECT_EQ(points_of(view.decode_b), expected_points(b, false));
  EXPECT_EQ(view.prefill_b->dataCount(), 1);
  view.set_overlay(nullptr);
  EXPECT_FALSE(view.decode_b->visible());
  EXPECT_EQ(view.decode_b->dataCount(), 0);
}

}  // namespace
}  // namespace inferscope::gui::test
