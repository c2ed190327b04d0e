#include "gui/dashboard/spec_plots.h"

#include <algorithm>
#include <qcustomplot.h>

#include "gui/dashboard/metrics_series.h"
#include "gui/plot/plot_setup.h"
#include "gui/plot/plot_units.h"

namespace inferscope::gui {
namespace {

const QColor kAcceptance(16, 150, 72), kDraftTime(214, 120, 0), kVerifyTime(31, 78, 160), kChosenK(124, 58, 237);
constexpr double kBarWidth = 0.6, kPairedBarWidth = 0.38;

void set_series(QCPAbstractPlottable* p, const Series& s) {
  if (auto* g = qobject_cast<QCPGraph*>(p)) g->setData(s.x, s.y, true);
  if (auto* b = qobject_cast<QCPBars*>(p)) b->setData(s.x, s.y, true);
}

// "mean length 2.41 · draft 3.1 ms vs verify 41.0 ms" (per drafting step; "" before any draft).
QString summary_line(const EngineMetricsSnapshot& s) {
  if (s.spec.num_drafts == 0) return {};
  double draft = 0, verify = 0;
  int steps = 0;
  for (const StepMetrics& step : s.steps) {
    if (step.spec_draft_tokens == 0) continue;
    draft += step.draft_seconds;
    verify += step.verify_seconds;
    ++steps;
  }
  QString line = QString("mean length %1").arg(s.spec.mean_acceptance_length(), 0, 'f', 2);
  if (steps > 0) {
    line += QString(" · draft %1 vs verify %2")
                .arg(format_value(draft / steps, Unit::Seconds), format_value(verify / steps, Unit::Seconds));
  }
  return line;
}

}  // namespace

SpecPlots::SpecPlots(QCustomPlot* over_time, QCustomPlot* by_position)
    : by_position_(by_position), group_(new QCPBarsGroup(by_position)) {
  per_step = add_graph(over_time, QStringLiteral("per step"), kAcceptance, Look::Scatter);
  per_step->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, kAcceptance.lighter(130), kAcceptance.lighter(130), 4));
  window = add_graph(over_time, QStringLiteral("last %1 steps").arg(kAcceptanceWindowSteps), kAcceptance, Look::Line);
  over_time->yAxis2->setVisible(true);
  over_time->yAxis2->setLabel(QStringLiteral("step time"));
  set_axis_unit(over_time->yAxis2, Unit::Seconds);
  draft_time = add_graph(over_time, QStringLiteral("draft time"), kDraftTime, Look::Line, over_time->yAxis2);
  verify_time = add_graph(over_time, QStringLiteral("verify time"), kVerifyTime, Look::Line, over_time->yAxis2);
  // The draft length each decode step allowed, on an axis of its own (whole tokens), shown with its data.
  QCPAxis* k_axis = over_time->axisRect()->addAxis(QCPAxis::atRight);
  k_axis->setLabel(QStringLiteral("draft k"));
  QSharedPointer<QCPAxisTickerFixed> whole(new QCPAxisTickerFixed);
  whole->setTickStep(1);
  whole->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  k_axis->setTicker(whole);
  k_axis->setVisible(false);
  chosen_k = add_graph(over_time, QStringLiteral("draft k allowed"), kChosenK, Look::Line, k_axis);
  chosen_k->setLineStyle(QCPGraph::lsStepLeft);
  fit_legend_to_width(over_time, 5);

  positions = add_bars(by_position, QStringLiteral("acceptance"), kAcceptance);
  positions_b = add_bars(by_position, QStringLiteral("acceptance"), QColor(194, 65, 12));
  positions->setWidth(kBarWidth);
  positions_b->setWidth(kPairedBarWidth);
  positions_b->setVisible(false);
  positions_b->removeFromLegend();
  by_position->xAxis->setLabel(QStringLiteral("draft position"));
  // Hover names the key as a position, not a time.
  by_position->setProperty("key_name", QStringLiteral("draft position"));
  QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
  ticker->setTickStep(1);
  ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
  by_position->xAxis->setTicker(ticker);
  // The summary line sits under the title, above the legend: it never covers a bar.
  by_position->plotLayout()->insertRow(1);
  summary_ = new QCPTextElement(by_position, QString(), QFont(by_position->font().family(), 8));
  summary_->setTextColor(QColor(55, 65, 81));
  by_position->plotLayout()->addElement(1, 0, summary_);
  by_position->plotLayout()->setRowStretchFactor(1, 0.001);
  clear();
}

void SpecPlots::update_from(const EngineMetricsSnapshot& s) {
  mode_ = s.spec_mode;
  set_series(per_step, drafting_step_series(s, [](const StepMetrics& m) {
    return double(m.spec_accepted_tokens) / double(m.spec_draft_tokens);
  }));
  set_series(window, acceptance_window_series(s));
  set_series(draft_time, drafting_step_series(s, [](const StepMetrics& m) { return m.draft_seconds; }));
  set_series(verify_time, drafting_step_series(s, [](const StepMetrics& m) { return m.verify_seconds; }));
  const Series k = reported_step_series(s, [](const StepMetrics& m) { return m.spec_chosen_k; });
  set_series(chosen_k, k);
  chosen_k->valueAxis()->setVisible(!k.x.isEmpty());
  if (!k.x.isEmpty()) chosen_k->valueAxis()->setRange(0, *std::max_element(k.y.begin(), k.y.end()) + 0.5);
  const Series at = acceptance_per_position(s.spec);
  set_series(positions, at);
  positions_shown_ = std::max(positions_shown_, static_cast<int>(at.x.size()));
  summary_a_ = summary_line(s);
  show_summary();
}

void SpecPlots::set_overlay(const EngineMetricsSnapshot* b, const QString& label_a, const QString& label_b) {
  label_a_ = label_a;
  label_b_ = label_b;
  positions_b->setVisible(b != nullptr);
  // Paired bars stand side by side at each position; a lone run's bars are centred.
  group_->clear();
  positions->setWidth(b ? kPairedBarWidth : kBarWidth);
  if (b) {
    const Series at = acceptance_per_position(b->spec);
    set_series(positions_b, at);
    positions_shown_ = std::max(positions_shown_, static_cast<int>(at.x.size()));
    group_->append(positions);
    group_->append(positions_b);
    positions_b->addToLegend();
    summary_b_ = summary_line(*b);
  } else {
    positions_b->data()->clear();
    positions_b->removeFromLegend();
    summary_b_.clear();
  }
  show_summary();
}

void SpecPlots::clear() {
  mode_ = "none";
  for (QCPGraph* g : {per_step, window, draft_time, verify_time, chosen_k}) g->data()->clear();
  chosen_k->valueAxis()->setVisible(false);
  positions->data()->clear();
  positions_shown_ = 0;
  summary_a_.clear();
  show_summary();
}

QString SpecPlots::empty_note() const {
  if (mode_ == "none") return QStringLiteral("speculative decoding: off");
  return QStringLiteral("%1: no drafts yet").arg(QString::fromStdString(mode_));
}

void SpecPlots::show_summary() {
  // With a second run, one line each, named by the runs' labels.
  QString text = summary_a_;
  if (positions_b->visible()) {
    const QString none = QStringLiteral("no drafts");
    text = label_a_ + ": " + (summary_a_.isEmpty() ? none : summary_a_) + "\n" + label_b_ + ": " +
           (summary_b_.isEmpty() ? none : summary_b_);
  }
  summary_->setText(text);
  summary_->setVisible(!text.isEmpty());
  by_position_->xAxis->setRange(0.5, std::max(positions_shown_, 4) + 0.5);
}

}  // namespace inferscope::gui
