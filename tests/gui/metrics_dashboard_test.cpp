// The dashboard on a known snapshot: every series gets exactly the points the snapshot holds (lines
// broken by a NaN point over the idle gap), the plots share one time axis that follows the data,
// preemptions and configuration changes are marked on every time plot, every plot has its help
// (tooltip and "?" button), the hover text names exact values, the comparison overlay draws a
// second run, export writes PNG + CSV, the roofline and the request timeline get the snapshot, and
// the speculative-decoding panels plot acceptance over time and per draft position with its summary;
// the wheel scrolls the dashboard and only Ctrl+wheel zooms.
#include <gtest/gtest.h>

#include <QFile>
#include <QLabel>
#include <QScrollBar>
#include <QWheelEvent>
#include <cmath>
#include <QTemporaryDir>
#include <set>
#include <qcustomplot.h>

#include "core/engine/step_metrics.h"
#include "gui/dashboard/metrics_dashboard.h"
#include "gui/dashboard/not_reported.h"
#include "gui/dashboard/request_timeline.h"
#include "gui/dashboard/roofline_view.h"
#include "gui/help/help_button.h"
#include "gui/plot/plot_hover.h"
#include "gui/plot/vertical_scroll.h"
#include "tests/gui/offscreen_app.h"
#include "tests/gui/synthetic_metrics.h"

namespace inferscope::gui::test {
namespace {

QCPAbstractPlottable* series(QCustomPlot* plot, const QString& name) {
  for (int i = 0; i < plot->plottableCount(); ++i)
    if (plot->plottable(i)->name() == name) return plot->plottable(i);
  ADD_FAILURE() << "no series '" << name.toStdString() << "' in " << plot->objectName().toStdString();
  return nullptr;
}

int points(QCustomPlot* plot, const QString& name) {
  QCPAbstractPlottable* p = series(plot, name);
  return p ? p->interface1D()->dataCount() : -1;
}

// The plot's centred note ("" when it has data).
QString note(QCustomPlot* plot) {
  for (int i = 0; i < plot->itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)); text && text->objectName().isEmpty()) return text->text();
  return "no note";
}

// The plots whose x axis is not time.
bool time_plot(const QCustomPlot* p) { return p->objectName() != "spec_decode" && p->objectName() != "roofline"; }

// The configuration marks drawn on a plot: their times and labels.
QList<std::pair<double, QString>> config_marks(QCustomPlot* plot) {
  QList<double> times;
  QStringList labels;
  for (int i = 0; i < plot->itemCount(); ++i) {
    if (auto* line = qobject_cast<QCPItemStraightLine*>(plot->item(i)); line && line->objectName() == "event_mark") {
      EXPECT_DOUBLE_EQ(line->point1->key(), line->point2->key()) << "vertical";
      times << line->point1->key();
    }
    if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)); text && text->objectName() == "event_mark_label")
      labels << text->text();
  }
  EXPECT_EQ(times.size(), labels.size());
  QList<std::pair<double, QString>> out;
  for (int i = 0; i < std::min(times.size(), labels.size()); ++i) out.push_back({times[i], labels[i]});
  return out;
}

struct Dashboard : ::testing::Test {
  Dashboard() {
    dash.resize(1600, 640);
    dash.show();
  }
  QCustomPlot* plot(const char* name) {
    QCustomPlot* p = dash.plot(QLatin1String(name));
    EXPECT_NE(p, nullptr) << name;
    return p;
  }
  QApplication& app = offscreen_app();  // before any widget
  MetricsDashboard dash;
};

// The wheel over a chart scrolls the dashboard that holds it; Ctrl+wheel zooms the time axis, and a
// zoom out stops at time 0.
TEST(DashboardWheel, ScrollsTheDashboardAndZoomsOnlyWithCtrl) {
  offscreen_app();
  auto* dash = new MetricsDashboard;
  std::unique_ptr<QScrollArea> scroll(vertical_scroll(dash));
  scroll->resize(1200, 400);
  scroll->show();
  dash->update_from(synthetic_snapshot());
  QApplication::processEvents();
  QScrollBar* bar = scroll->verticalScrollBar();
  ASSERT_GT(bar->maximum(), 0);
  QCustomPlot* ttft = dash->plot("ttft");
  ASSERT_NE(ttft, nullptr);
  const QCPRange before = ttft->xAxis->range();
  auto wheel = [&](Qt::KeyboardModifiers modifiers, int delta) {
    const QPointF at = ttft->axisRect()->center();
    QWheelEvent event(at, ttft->mapToGlobal(at), QPoint(), QPoint(0, delta), Qt::NoButton, modifiers, Qt::NoScrollPhase, false);
    QApplication::sendEvent(ttft, &event);
    QApplication::processEvents();
  };
  wheel(Qt::NoModifier, -120);
  EXPECT_GT(bar->value(), 0) << "the wheel scrolls the dashboard";
  EXPECT_EQ(ttft->xAxis->range(), before) << "and leaves the time axis alone";
  wheel(Qt::ControlModifier, 120);
  EXPECT_LT(ttft->xAxis->range().size(), before.size()) << "Ctrl+wheel zooms in";
  for (int i = 0; i < 10; ++i) wheel(Qt::ControlModifier, -120);
  EXPECT_GT(ttft->xAxis->range().size(), before.size()) << "and out";
  for (QCustomPlot* p : dash->plots()) {
    if (!time_plot(p)) continue;
    EXPECT_GE(p->xAxis->range().lower, 0.0) << p->objectName().toStdString() << " shows time before 0";
  }
  EXPECT_TRUE(ttft->toolTip().contains("Ctrl+wheel")) << "the tooltip says how the chart moves";
}

TEST_F(Dashboard, HasEveryPlotTitledAndExplained) {
  const QStringList names = {"ttft", "latency", "decode_tokens_per_second", "tokens_per_step", "request_timeline", "roofline",
                             "kv_usage", "kv_waste", "prefix_cache_hit_rate", "attention", "spec_acceptance", "spec_decode"};
  ASSERT_EQ(dash.plots().size(), names.size());
  for (const QString& name : names) {
    QCustomPlot* p = dash.plot(name);
    ASSERT_NE(p, nullptr) << name.toStdString();
    // Its help: the tooltip and a visible "?" button, both the help table's entry for this plot.
    const HelpText& help = help_text(name.toStdString());
    EXPECT_FALSE(help.definition.isEmpty()) << name.toStdString();
    EXPECT_TRUE(p->toolTip().startsWith(help_html(help))) << name.toStdString();
    auto* button = p->findChild<HelpButton*>();
    ASSERT_NE(button, nullptr) << name.toStdString() << ": no \"?\" button";
    EXPECT_TRUE(button->isVisible()) << name.toStdString();
    EXPECT_EQ(button->popup()->text(), help_html(help)) << name.toStdString();
    auto* title = qobject_cast<QCPTextElement*>(p->plotLayout()->element(0, 0));
    ASSERT_NE(title, nullptr);
    EXPECT_EQ(title->text(), help.title);
  }
  EXPECT_EQ(dash.plot("roofline"), dash.roofline());
  EXPECT_EQ(dash.plot("request_timeline"), dash.timeline());
  EXPECT_EQ(dash.roofline()->note(), "measuring the machine…");
  for (const char* name : {"spec_acceptance", "spec_decode"}) EXPECT_EQ(note(plot(name)), "speculative decoding: off") << name;
}

TEST_F(Dashboard, AServersOwnTtftPercentilesAreDrawnOnlyWhenItHasThem) {
  EngineMetricsSnapshot snap = synthetic_snapshot();
  dash.update_from(snap);
  EXPECT_EQ(points(plot("ttft"), "server TTFT p50 (10 s, all clients)"), 0);
  // A vLLM's histogram percentiles on its last two steps.
  snap.source = "vLLM at http://gpu:8000";
  const auto latency = [&](size_t step, ServerLatency which) -> LatencyPercentiles& {
    return snap.steps[step].server_latency[static_cast<size_t>(which)];
  };
  latency(snap.steps.size() - 2, ServerLatency::Ttft).p50_s = 0.1;
  latency(snap.steps.size() - 1, ServerLatency::Ttft) = {0.12, 0.4};
  latency(snap.steps.size() - 1, ServerLatency::InterToken) = {0.02, 0.05};
  latency(snap.steps.size() - 1, ServerLatency::EndToEnd) = {1.5, 3.0};
  dash.update_from(snap);
  EXPECT_EQ(points(plot("ttft"), "server TTFT p50 (10 s, all clients)"), 2);
  EXPECT_EQ(points(plot("ttft"), "server TTFT p99 (10 s, all clients)"), 1);
  EXPECT_EQ(points(plot("ttft"), "TTFT"), 2);  // this client's requests, as before
  EXPECT_EQ(points(plot("latency"), "server inter-token p99 (10 s, all clients)"), 1);
  EXPECT_EQ(points(plot("latency"), "server e2e p50 (10 s, all clients)"), 1);
  EXPECT_EQ(points(plot("latency"), "server queue time p50 (10 s, all clients)"), 0);  // it keeps no such histogram
  // An SGLang's gauges, in its next interval: its hit rate and acceptance rate on the panels of the same quantity.
  StepMetrics next = snap.steps.back();
  next.time_s += next.duration_s;
  next.server_prefix_hit_rate = 0.3;
  next.server_spec_accept_rate = 0.6;
  next.server_spec_accept_length = 2.75;
  snap.steps.push_back(next);
  dash.update_from(snap);
  EXPECT_EQ(points(plot("prefix_cache_hit_rate"), "server hit rate (its gauge)"), 1);
  EXPECT_EQ(points(plot("spec_acceptance"), "server acceptance rate (its gauge)"), 1);
  EXPECT_EQ(points(plot("spec_acceptance"), "server accepted length (its gauge)"), 1);
}

// A server whose polls fail: every panel with nothing to draw says why, until one is answered.
TEST_F(Dashboard, EmptyPanelsSayWhyTheServersPollFailed) {
  EngineMetricsSnapshot snap;
  snap.source = "vLLM at http://127.0.0.1:8000";
  snap.source_error = "http://127.0.0.1:8000/metrics: HTTP 503 (asking again every 0.8 s)";
  dash.update_from(snap);
  EXPECT_EQ(note(plot("ttft")), QString::fromStdString(snap.source_error));
  EXPECT_EQ(note(plot("kv_usage")), QString::fromStdString(snap.source_error));
  snap.source_error.clear();
  dash.update_from(snap);
  EXPECT_EQ(note(plot("ttft")), "waiting for the first engine step");
}

TEST_F(Dashboard, PanelsTheServerDoesNotReportSaySoAndDrawNothing) {
  for (QCustomPlot* p : dash.plots()) EXPECT_NO_THROW(reported_quantity(p->objectName().toStdString()));
  EngineMetricsSnapshot snap = synthetic_snapshot();
  snap.source = "llama.cpp at http://127.0.0.1:8080";
  snap.not_reported = {"kv_usage", "attention"};
  dash.update_from(snap);
  EXPECT_EQ(points(plot("kv_usage"), "KV usage"), 0);
  EXPECT_EQ(points(plot("attention"), "scratch bytes"), 0);
  EXPECT_EQ(points(plot("attention"), "attention time"), 0);
  EXPECT_EQ(points(plot("attention"), "matmul time"), 0);
  EXPECT_EQ(note(plot("kv_usage")), "llama.cpp at http://127.0.0.1:8080:\nthis server does not report\nKV usage");
  EXPECT_EQ(note(plot("attention")), "llama.cpp at http://127.0.0.1:8080:\nthis server does not report\nattention scratch or time");
  // The others draw as before.
  EXPECT_EQ(points(plot("ttft"), "TTFT"), 2);
  EXPECT_EQ(points(plot("kv_waste"), "internal fragmentation"), kFirstStretch + kSecondStretch + 1);
  for (const char* name : {"ttft", "decode_tokens_per_second", "tokens_per_step", "kv_waste", "prefix_cache_hit_rate"})
    EXPECT_EQ(note(plot(name)), "") << name;
  EXPECT_FALSE(dash.timeline()->lanes().empty());
  render(dash, "dashboard_not_reported");

  // Per line: a server that reports KV usage but not fragmentation leaves that one line empty, and
  // the panel, whose other line it fills, draws on without a note.
  dash.clear();
  snap.not_reported = {"kv_internal_fragmentation_perc"};
  dash.update_from(snap);
  EXPECT_EQ(points(plot("kv_waste"), "internal fragmentation"), 0);
  EXPECT_EQ(points(plot("kv_waste"), "reserved unused"), kFirstStretch + kSecondStretch + 1);
  EXPECT_EQ(note(plot("kv_waste")), "");
  // Both of its lines: the panel says so.
  snap.not_reported = {"kv_internal_fragmentation_perc", "kv_reserved_unused_perc"};
  dash.update_from(snap);
  EXPECT_EQ(note(plot("kv_waste")), "llama.cpp at http://127.0.0.1:8080:\nthis server does not report\nKV fragmentation or waste");
  EngineMetricsSnapshot undrawn;
  undrawn.not_reported = {"flops"};
  EXPECT_THROW(check_not_reported(undrawn), std::invalid_argument) << "a step metric no line draws is no name to leave out";

  // The request timeline and the roofline say it too, with no lanes and no dots.
  snap.not_reported = {"request_timeline", "roofline"};
  dash.update_from(snap);
  EXPECT_TRUE(dash.timeline()->lanes().empty());
  EXPECT_EQ(dash.timeline()->note(), "llama.cpp at http://127.0.0.1:8080:\nthis server does not report\nper-request timings");
  EXPECT_EQ(dash.roofline()->prefill->dataCount() + dash.roofline()->decode->dataCount(), 0);
  EXPECT_EQ(dash.roofline()->note(), "llama.cpp at http://127.0.0.1:8080:\nthis server does not report\nFLOPs or bytes");
  EXPECT_EQ(points(plot("kv_usage"), "KV usage"), kFirstStretch + kSecondStretch + 1);
  EXPECT_EQ(note(plot("kv_usage")), "");
  render(dash, "dashboard_not_reported_views");

  // Back to the local engine: everything draws again.
  snap.source.clear();
  snap.not_reported.clear();
  dash.update_from(snap);
  EXPECT_FALSE(dash.timeline()->lanes().empty());
  EXPECT_EQ(dash.timeline()->note(), "");
  EXPECT_GT(dash.roofline()->prefill->dataCount() + dash.roofline()->decode->dataCount(), 0);

  // A name that is no panel is refused, named.
  snap.not_reported = {"kv_cache_usage"};
  try {
    dash.update_from(snap);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'kv_cache_usage'"), std::string::npos) << e.what();
  }
}

// Above a server's panels a line says which releases its metric names fit and what it does not
// publish; the decode line says how the server counts what it draws; the token bars draw per scrape
// interval though no engine step's time is known.
TEST_F(Dashboard, AServersSourceLineNamesItsReleaseAndItsThroughputsBasis) {
  auto* source_line = dash.findChild<QLabel*>(QStringLiteral("source_line"));
  ASSERT_NE(source_line, nullptr);
  EngineMetricsSnapshot snap = synthetic_snapshot();
  snap.source = "llama.cpp at http://127.0.0.1:8080";
  snap.source_release = "llama.cpp (llama-cpp-python 0.3.36)";
  snap.source_unpublished = "KV cache usage, time to first token";
  snap.throughput_basis = "counted at request end, spread";
  snap.not_reported = {"kv_usage", "duration_s"};
  dash.show();
  dash.update_from(snap);
  EXPECT_TRUE(source_line->isVisible());
  EXPECT_EQ(source_line->text(), "llama.cpp at http://127.0.0.1:8080: metrics of llama.cpp (llama-cpp-python 0.3.36). "
                                 "Not published by the server: KV cache usage, time to first token.");
  EXPECT_EQ(note(plot("kv_usage")), "llama.cpp at http://127.0.0.1:8080:\nthis server does not report\nKV usage");
  EXPECT_EQ(note(plot("tokens_per_step")), "");
  EXPECT_GT(points(plot("tokens_per_step"), "prefill tokens"), 0);
  EXPECT_EQ(points(plot("tokens_per_step"), "step duration"), 0);
  EXPECT_GT(points(plot("decode_tokens_per_second"), "server decode tok/s (counted at request end, spread)"), 0);
  render(dash, "dashboard_server_release");
  dash.clear();  // the local engine again
  EXPECT_FALSE(source_line->isVisible());
  dash.update_from(synthetic_snapshot());
  EXPECT_FALSE(source_line->isVisible());
  EXPECT_GT(points(plot("decode_tokens_per_second"), "engine decode tok/s"), 0);
}

TEST_F(Dashboard, SpeculationPanelsPlotAcceptanceOverTimeAndPerPosition) {
  EngineMetricsSnapshot snap = synthetic_spec_snapshot();
  dash.update_from(snap);
  // Over time: only the drafting steps (every step but the prefill), broken once over the idle gap.
  const int drafting = kFirstStretch + kSecondStretch - 2;
  QCustomPlot* over_time = plot("spec_acceptance");
  ASSERT_EQ(points(over_time, "per step"), drafting + 1);
  EXPECT_DOUBLE_EQ(series(over_time, "per step")->interface1D()->dataMainValue(0), 0.75);
  EXPECT_DOUBLE_EQ(series(over_time, "per step")->interface1D()->dataMainValue(1), 0.25);
  EXPECT_DOUBLE_EQ(series(over_time, "last 8 steps")->interface1D()->dataMainValue(1), 0.5);
  EXPECT_EQ(points(over_time, "draft time"), drafting + 1);
  EXPECT_DOUBLE_EQ(series(over_time, "verify time")->interface1D()->dataMainValue(0), 0.008);
  EXPECT_EQ(series(over_time, "draft time")->valueAxis(), over_time->yAxis2);
  EXPECT_EQ(over_time->xAxis->range(), plot("ttft")->xAxis->range()) << "on the shared time axis";
  EXPECT_EQ(note(over_time), "");

  // Per position: accepted at each position / drafts.
  QCustomPlot* by_position = plot("spec_decode");
  ASSERT_EQ(points(by_position, "acceptance"), 4);
  EXPECT_DOUBLE_EQ(series(by_position, "acceptance")->interface1D()->dataMainValue(0), 0.8);
  EXPECT_DOUBLE_EQ(series(by_position, "acceptance")->interface1D()->dataMainValue(3), 0.1);
  auto* summary = qobject_cast<QCPTextElement*>(by_position->plotLayout()->element(1, 0));
  ASSERT_NE(summary, nullptr);
  EXPECT_EQ(summary->text(), "mean length 2.60 · draft 2.00 ms vs verify 8.00 ms");
  by_position->replot(QCustomPlot::rpImmediateRefresh);
  const QPointF bar = series(by_position, "acceptance")->interface1D()->dataPixelPosition(1);
  const QString hover = hover_text(*by_position, bar + QPointF(0, 5));
  EXPECT_TRUE(hover.startsWith("draft position 2\nacceptance: 50.0 %")) << hover.toStdString();
  render(dash, "dashboard_spec");

  // The comparison's B: its bars beside A's, both summaries named.
  EngineMetricsSnapshot b = snap;
  b.spec.num_accepted_tokens = 40;
  b.spec.num_accepted_tokens_per_pos = {10, 10, 10, 10};
  dash.set_overlay(&b, "A", "B");
  EXPECT_EQ(points(by_position, "acceptance · B"), 4);
  EXPECT_EQ(points(by_position, "acceptance · A"), 4);
  EXPECT_TRUE(summary->text().startsWith("A: mean length 2.60")) << summary->text().toStdString();
  EXPECT_TRUE(summary->text().contains("\nB: mean length 5.00")) << summary->text().toStdString();
  EXPECT_EQ(points(over_time, "last 8 steps · B"), drafting);
  dash.set_overlay(nullptr, {}, {});
  EXPECT_EQ(points(by_position, "acceptance"), 4) << "names lose the run labels";
  EXPECT_EQ(summary->text(), "mean length 2.60 · draft 2.00 ms vs verify 8.00 ms");

  // A mode with nothing drafted yet says so.
  EngineMetricsSnapshot waiting;
  waiting.spec_mode = "ngram";
  dash.clear();
  dash.update_from(waiting);
  EXPECT_EQ(note(by_position), "ngram: no drafts yet");
}

// Every step metric the table draws is a line on its panel and axis, with run B's line where its row
// asks for one: a new row needs no dashboard code.
TEST_F(Dashboard, EveryDrawnStepMetricIsALineOnItsPanel) {
  const EngineMetricsSnapshot snap = synthetic_snapshot();
  dash.update_from(snap);
  dash.set_overlay(&snap, "A", "B");
  const int steps = kFirstStretch + kSecondStretch;
  int drawn = 0;
  for (const StepMetric& m : step_metrics_table()) {
    if (m.look == MetricLook::None) continue;
    SCOPED_TRACE(m.key);
    ++drawn;
    QCustomPlot* panel = plot(m.panel.c_str());
    const QString line = QString::fromStdString(m.line);
    ASSERT_EQ(points(panel, line + " · A"), steps + 1);
    EXPECT_EQ(series(panel, line + " · A")->valueAxis(), m.right_axis ? panel->yAxis2 : panel->yAxis);
    bool overlaid = false;
    for (int i = 0; i < panel->plottableCount(); ++i) overlaid = overlaid || panel->plottable(i)->name() == line + " · B";
    EXPECT_EQ(overlaid, m.overlay);
  }
  EXPECT_EQ(drawn, 7);
}

TEST_F(Dashboard, SeriesHoldTheSnapshotsPoints) {
  const EngineMetricsSnapshot snap = synthetic_snapshot();
  dash.update_from(snap);
  const int steps = kFirstStretch + kSecondStretch;
  EXPECT_EQ(points(plot("ttft"), "TTFT"), 2);
  // Lines get one NaN point over the idle gap; bars none.
  EXPECT_EQ(points(plot("decode_tokens_per_second"), "engine decode tok/s"), steps + 1);
  EXPECT_EQ(points(plot("tokens_per_step"), "prefill tokens"), steps);
  EXPECT_EQ(points(plot("tokens_per_step"), "decode tokens"), steps);
  EXPECT_EQ(points(plot("tokens_per_step"), "step duration"), steps + 1);
  EXPECT_EQ(points(plot("kv_usage"), "KV usage"), steps + 1);
  EXPECT_EQ(points(plot("kv_waste"), "internal fragmentation"), steps + 1);
  EXPECT_EQ(points(plot("kv_waste"), "reserved unused"), steps + 1);
  EXPECT_EQ(points(plot("attention"), "scratch bytes"), steps + 1);
  EXPECT_EQ(points(plot("attention"), "attention time"), steps + 1);
  EXPECT_EQ(points(plot("attention"), "matmul time"), steps + 1);
  auto* usage = qobject_cast<QCPGraph*>(series(plot("kv_usage"), "KV usage"));
  ASSERT_NE(usage, nullptr);
  EXPECT_TRUE(std::isnan(usage->data()->at(kFirstStretch)->value)) << "the line breaks over the idle gap";
  EXPECT_DOUBLE_EQ(usage->data()->at(kFirstStretch)->key, snap.steps[kFirstStretch - 1].time_s);
  // The roofline and the timeline: a dot per step, a lane per request.
  EXPECT_EQ(points(plot("roofline"), "prefill steps") + points(plot("roofline"), "decode-only steps"), steps);
  EXPECT_EQ(dash.timeline()->lanes().size(), snap.requests.size());
  ASSERT_EQ(points(plot("prefix_cache_hit_rate"), "hit rate (cumulative)"), 1);
  EXPECT_DOUBLE_EQ(series(plot("prefix_cache_hit_rate"), "hit rate (cumulative)")->interface1D()->dataMainValue(0), 0.25);

  auto* prefill = qobject_cast<QCPBars*>(series(plot("tokens_per_step"), "prefill tokens"));
  auto* decode = qobject_cast<QCPBars*>(series(plot("tokens_per_step"), "decode tokens"));
  ASSERT_TRUE(prefill && decode);
  EXPECT_EQ(decode->barBelow(), prefill) << "decode bars stack on prefill bars";
  EXPECT_DOUBLE_EQ(prefill->data()->at(0)->value, 32);
  EXPECT_DOUBLE_EQ(decode->data()->at(1)->value, 2);
  auto* scratch = series(plot("attention"), "scratch bytes");
  EXPECT_DOUBLE_EQ(scratch->interface1D()->dataMainValue(2), 3 * 4096.0);
  EXPECT_EQ(scratch->valueAxis(), plot("attention")->yAxis);
  EXPECT_EQ(series(plot("attention"), "attention time")->valueAxis(), plot("attention")->yAxis2);
  EXPECT_EQ(series(plot("attention"), "matmul time")->valueAxis(), plot("attention")->yAxis2);

  // One time axis, following the data: every time plot shows the same range, covering all points.
  const QCPRange x = plot("ttft")->xAxis->range();
  EXPECT_LE(x.lower, 1.0);
  EXPECT_GE(x.upper, snap.steps.back().time_s);
  for (QCustomPlot* p : dash.plots()) {
    if (!time_plot(p)) continue;
    EXPECT_EQ(p->xAxis->range(), x) << p->objectName().toStdString();
  }
  // Value axes follow the data: the tallest stacked bar (32 prefill tokens) fits.
  EXPECT_GE(plot("tokens_per_step")->yAxis->range().upper, 32);
  EXPECT_LT(plot("tokens_per_step")->yAxis->range().upper, 60);
}

TEST_F(Dashboard, SeriesGrowWithTheEngineAndClearEmptiesThem) {
  EngineMetricsSnapshot snap = synthetic_snapshot();
  dash.update_from(snap);
  for (int i = kSecondStretch; i < kSecondStretch + 5; ++i) snap.steps.push_back(synthetic_step(3.0, i));
  snap.num_steps += 5;
  dash.update_from(snap);
  EXPECT_EQ(points(plot("kv_usage"), "KV usage"), kFirstStretch + kSecondStretch + 5 + 1);
  dash.clear();
  for (QCustomPlot* p : dash.plots())
    for (int i = 0; i < p->plottableCount(); ++i) EXPECT_EQ(p->plottable(i)->interface1D()->dataCount(), 0);
  dash.update_from(snap);  // the same snapshot again after clear() draws again
  EXPECT_EQ(points(plot("kv_usage"), "KV usage"), kFirstStretch + kSecondStretch + 5 + 1);
}

TEST_F(Dashboard, ConfigChangesAreMarkedOnEveryTimePlot) {
  dash.update_from(synthetic_snapshot());
  for (QCustomPlot* p : dash.plots()) EXPECT_TRUE(config_marks(p).isEmpty()) << p->objectName().toStdString();
  dash.mark_config_change(2.0, "KV contiguous");
  dash.mark_config_change(2.5, "weights now q8");
  for (QCustomPlot* p : dash.plots()) {
    const auto marks = config_marks(p);
    if (!time_plot(p)) {
      EXPECT_TRUE(marks.isEmpty()) << p->objectName().toStdString() << " has no time axis";
      continue;
    }
    ASSERT_EQ(marks.size(), 2) << p->objectName().toStdString();
    EXPECT_EQ(marks[0], std::make_pair(2.0, QString("KV contiguous"))) << p->objectName().toStdString();
    EXPECT_EQ(marks[1], std::make_pair(2.5, QString("weights now q8"))) << p->objectName().toStdString();
  }
  // A mark after the last step is still in view.
  dash.mark_config_change(4.0, "attention naive");
  EXPECT_GE(plot("kv_usage")->xAxis->range().upper, 4.0);
  render(dash, "dashboard_config_marks");
  dash.clear();  // a new engine: its own marks only
  for (QCustomPlot* p : dash.plots()) EXPECT_TRUE(config_marks(p).isEmpty()) << p->objectName().toStdString();
}

TEST_F(Dashboard, ConfigurationLabelsStayAboveTheDataInTwoRowsAtMost) {
  dash.update_from(synthetic_snapshot());
  for (int i = 0; i < 6; ++i) dash.mark_config_change(1.02 + 0.01 * i, QString("change number %1").arg(i));
  QCustomPlot* tokens = plot("tokens_per_step");
  tokens->replot(QCustomPlot::rpImmediateRefresh);
  std::set<int> rows;
  int shown = 0;
  double lowest = 0;
  for (int i = 0; i < tokens->itemCount(); ++i) {
    auto* label = qobject_cast<QCPItemText*>(tokens->item(i));
    if (!label || label->objectName() != "event_mark_label" || !label->visible()) continue;
    ++shown;
    rows.insert(static_cast<int>(std::lround(label->top->pixelPosition().y())));
    lowest = std::max(lowest, label->bottom->pixelPosition().y());
  }
  // Six labels crowded into 0.05 s: two rows show, the rest wait for a zoom.
  EXPECT_EQ(rows.size(), 2u);
  EXPECT_GT(shown, 0);
  EXPECT_LT(shown, 6);
  // The value axis leaves their band free: the highest bar (32 prefill tokens) ends below the labels.
  EXPECT_LE(lowest, tokens->yAxis->coordToPixel(32)) << "a label covers the data";
}

TEST_F(Dashboard, LegendsFitTheirChartsWithLongRunNames) {
  dash.update_from(synthetic_snapshot());
  const EngineMetricsSnapshot other = synthetic_snapshot();
  dash.set_overlay(&other, "A", "B (dry run)");
  for (int width : {1600, 900}) {
    dash.resize(width, 1400);
    QApplication::processEvents();
    for (QCustomPlot* p : dash.plots()) {
      p->replot(QCustomPlot::rpImmediateRefresh);
      // Every entry gets the width its text needs, and ends inside the chart.
      for (int i = 0; i < p->legend->itemCount(); ++i) {
        QCPAbstractLegendItem* item = p->legend->item(i);
        if (item == nullptr) continue;  // an empty cell of the grid
        EXPECT_GE(item->outerRect().width(), item->minimumOuterSizeHint().width()) << p->objectName().toStdString() << " " << i;
        EXPECT_LE(item->outerRect().right(), p->width()) << p->objectName().toStdString() << " at " << width;
      }
    }
  }
}

TEST_F(Dashboard, PreemptionsAreMarkedOnEveryTimePlot) {
  EngineMetricsSnapshot snap = synthetic_snapshot();
  dash.update_from(snap);
  EXPECT_EQ(points(plot("kv_usage"), "preemptions"), 0);
  snap.steps.push_back(synthetic_step(3.0, kSecondStretch));
  snap.num_preemptions = 2;
  dash.update_from(snap);
  for (QCustomPlot* p : dash.plots()) {
    if (!time_plot(p)) continue;
    ASSERT_EQ(points(p, "preemptions"), 1) << p->objectName().toStdString();
    EXPECT_DOUBLE_EQ(series(p, "preemptions")->interface1D()->dataMainKey(0), snap.steps.back().time_s);
    EXPECT_DOUBLE_EQ(series(p, "preemptions")->interface1D()->dataMainValue(0), 2);
  }
}

TEST_F(Dashboard, HoverShowsExactValues) {
  dash.update_from(synthetic_snapshot());
  QCustomPlot* ttft = plot("ttft");
  ttft->replot(QCustomPlot::rpImmediateRefresh);  // lay the axes out so pixels map to values
  const QPointF at = series(ttft, "TTFT")->interface1D()->dataPixelPosition(0);
  const QString text = hover_text(*ttft, at + QPointF(3, -2));
  EXPECT_TRUE(text.contains("t = 1.010 s")) << text.toStdString();
  EXPECT_TRUE(text.contains("TTFT (request 0): 30.0 ms")) << text.toStdString();
  EXPECT_TRUE(hover_text(*ttft, at + QPointF(0, 60)).isEmpty()) << "away from every point";

  // Over a stacked bar: that step's prefill, decode and duration together.
  QCustomPlot* tokens = plot("tokens_per_step");
  tokens->replot(QCustomPlot::rpImmediateRefresh);
  const QPointF bar = series(tokens, "prefill tokens")->interface1D()->dataPixelPosition(0);
  const QString step = hover_text(*tokens, bar + QPointF(0, 10));
  EXPECT_TRUE(step.contains("prefill tokens: 32")) << step.toStdString();
  EXPECT_TRUE(step.contains("decode tokens: 0")) << step.toStdString();
  EXPECT_TRUE(step.contains("step duration: 10.0 ms")) << step.toStdString();
}

TEST_F(Dashboard, RunsFarApartShareALogAxisInsteadOfFlatteningOne) {
  // B runs every step 1000 times faster (a simulated GPU against this CPU).
  dash.update_from(synthetic_snapshot());
  EngineMetricsSnapshot fast = synthetic_snapshot();
  for (StepMetrics& step : fast.steps) step.duration_s /= 1000, step.time_s /= 1000;
  dash.set_overlay(&fast, "A", "B (dry run)");
  QCPAxis* rate = plot("decode_tokens_per_second")->yAxis;
  EXPECT_EQ(rate->scaleType(), QCPAxis::stLogarithmic);
  EXPECT_LT(rate->range().lower, 200) << "A's 200 tok/s is on the axis, not flattened at its foot";
  EXPECT_GT(rate->range().upper, 200000);
  EXPECT_EQ(plot("kv_usage")->yAxis->scaleType(), QCPAxis::stLinear) << "both runs' fractions are alike";
  // Runs alike share a linear axis from 0 again.
  EngineMetricsSnapshot alike = synthetic_snapshot();
  dash.set_overlay(&alike, "A", "B");
  EXPECT_EQ(rate->scaleType(), QCPAxis::stLinear);
  EXPECT_EQ(rate->range().lower, 0);
  // The timeline: each B lane right under its A lane, tagged by the run's name without its note.
  const std::vector<RequestTimeline::Row>& rows = dash.timeline()->rows();
  ASSERT_EQ(rows.size(), 6u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].run, static_cast<int>(i % 2)) << i;
    EXPECT_EQ(rows[i].lane->id, rows[i - i % 2].lane->id) << i;
  }
  dash.set_overlay(&fast, "A", "B (dry run)");
  auto* ticker = dynamic_cast<QCPAxisTickerText*>(dash.timeline()->yAxis->ticker().data());
  ASSERT_NE(ticker, nullptr);
  const QStringList labels = ticker->ticks().values();
  EXPECT_TRUE(labels.contains("B 0")) << labels.join(", ").toStdString();
  EXPECT_GE(dash.timeline()->minimumHeight(), 9 * 6) << "every lane keeps its height";
  dash.set_overlay(nullptr, {}, {});
  EXPECT_EQ(dash.timeline()->rows().size(), 3u);
}

TEST_F(Dashboard, OverlayDrawsASecondRunDashedAndLabelled) {
  dash.update_from(synthetic_snapshot());
  EngineMetricsSnapshot other = synthetic_snapshot();
  other.steps.resize(kFirstStretch);
  other.requests.pop_back();
  dash.set_overlay(&other, "A: paged", "B: contiguous");
  QCustomPlot* usage = plot("kv_usage");
  QCPAbstractPlottable* a = series(usage, "KV usage · A: paged");
  auto* b = qobject_cast<QCPGraph*>(series(usage, "KV usage · B: contiguous"));
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(b->visible());
  EXPECT_EQ(b->pen().style(), Qt::DashLine);
  EXPECT_EQ(b->pen().color(), a->pen().color());
  EXPECT_EQ(b->dataCount(), kFirstStretch);
  EXPECT_EQ(points(plot("ttft"), "TTFT · B: contiguous"), 2);
  QTemporaryDir dir;
  dash.export_all(dir.path());
  QFile csv(dir.filePath("kv_usage.csv"));
  ASSERT_TRUE(csv.open(QIODevice::ReadOnly));
  const QByteArray text = csv.readAll();
  EXPECT_TRUE(text.contains("KV usage · A: paged,1.01,0.05\n")) << text.toStdString();
  EXPECT_TRUE(text.contains("KV usage · B: contiguous,1.01,0.05\n")) << text.toStdString();
  render(dash, "dashboard_overlay");

  dash.set_overlay(nullptr, {}, {});
  EXPECT_FALSE(b->visible());
  EXPECT_EQ(b->dataCount(), 0);
  EXPECT_EQ(points(usage, "KV usage"), kFirstStretch + kSecondStretch + 1) << "names lose the run labels";
}

TEST_F(Dashboard, DotsOnTopOfDotsLetThemShowThrough) {
  dash.update_from(synthetic_snapshot());
  EngineMetricsSnapshot other = synthetic_snapshot();
  dash.set_overlay(&other, "A", "B");
  auto* a = qobject_cast<QCPGraph*>(series(plot("ttft"), "TTFT · A"));
  auto* b = qobject_cast<QCPGraph*>(series(plot("ttft"), "TTFT · B"));
  ASSERT_TRUE(a && b);
  // A's discs are translucent inside a solid rim; B's rings are hollow: where both runs put a dot at
  // the same place, both show.
  EXPECT_LT(a->scatterStyle().brush().color().alpha(), 255);
  EXPECT_EQ(a->scatterStyle().pen().color().alpha(), 255);
  EXPECT_EQ(b->scatterStyle().brush().style(), Qt::NoBrush);
  // The same on the latency chart, whose three series share their times.
  for (const char* name : {"e2e latency · A", "queue time · A", "inter-token latency (median) · A"}) {
    auto* g = qobject_cast<QCPGraph*>(series(plot("latency"), name));
    ASSERT_NE(g, nullptr) << name;
    EXPECT_LT(g->scatterStyle().brush().color().alpha(), 255) << name;
  }
}

TEST_F(Dashboard, ARunOnItsOwnClockGetsATopAxisAndTheChartGrowsForIt) {
  dash.resize(800, 900);
  dash.update_from(synthetic_snapshot());
  QCustomPlot* latency = plot("latency");
  QApplication::processEvents();
  const int alone = latency->minimumHeight();
  EngineMetricsSnapshot virtual_run = synthetic_snapshot();
  dash.set_overlay(&virtual_run, "A", "B (dry run)", true);
  QApplication::processEvents();
  auto* e2e_b = qobject_cast<QCPGraph*>(series(latency, "e2e latency · B (dry run) · top axis"));
  ASSERT_NE(e2e_b, nullptr);
  EXPECT_EQ(e2e_b->keyAxis(), latency->xAxis2);
  EXPECT_TRUE(latency->xAxis2->visible());
  // More legend lines and the top axis: the chart asks for that much more height, not less data.
  EXPECT_GT(latency->minimumHeight(), alone + 15);
  dash.set_overlay(nullptr, {}, {});
  QApplication::processEvents();
  EXPECT_FALSE(latency->xAxis2->visible());
  EXPECT_EQ(latency->minimumHeight(), alone);
}

TEST_F(Dashboard, ExportWritesPngAndCsvPerPlot) {
  dash.update_from(synthetic_snapshot());
  QTemporaryDir dir;
  const QStringList files = dash.export_all(dir.filePath("out"));  // the folder is created
  ASSERT_EQ(files.size(), 2 * dash.plots().size());
  for (const QString& f : files) EXPECT_TRUE(QFile::exists(f)) << f.toStdString();
  QImage png(dir.filePath("out/kv_usage.png"));
  ASSERT_FALSE(png.isNull());
  EXPECT_GE(png.width(), 300);
  EXPECT_GT(distinct_colors(png), 10) << "a real plot, not a blank image";
  QFile csv(dir.filePath("out/ttft.csv"));
  ASSERT_TRUE(csv.open(QIODevice::ReadOnly));
  EXPECT_EQ(csv.readAll(), QByteArray("series,seconds since engine start,value\nTTFT,1.01,0.03\nTTFT,1.04,0.05\n"));
  QFile rate(dir.filePath("out/decode_tokens_per_second.csv"));
  ASSERT_TRUE(rate.open(QIODevice::ReadOnly));
  EXPECT_FALSE(rate.readAll().contains("nan")) << "the idle-gap marker is not a measurement";
  EXPECT_THROW(dash.export_all("/proc/no/such/dir"), std::runtime_error);
}

TEST_F(Dashboard, RendersReadably) {
  const QImage empty = render(dash, "dashboard_empty");
  dash.update_from(synthetic_snapshot());
  const QImage full = render(dash, "dashboard");
  ASSERT_FALSE(full.isNull());
  EXPECT_GT(distinct_colors(full), distinct_colors(empty));
}

}  // namespace
}  // namespace inferscope::gui::test
