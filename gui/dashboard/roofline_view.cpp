#include "gui/dashboard/roofline_view.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gui/dashboard/not_reported.h"
#include "gui/dashboard/series_colors.h"
#include "gui/plot/plot_hover.h"
#include "gui/plot/plot_setup.h"

namespace inferscope::gui {

namespace {

const QColor kRoofColor(55, 65, 81);
// The roofs are drawn over this span of intensities (FLOP/B), far beyond any axis range.
constexpr double kRoofFrom = 1e-4, kRoofTo = 1e6;
constexpr double kMargin = 3;  // the axes reach this factor beyond the outermost dot or roof corner
constexpr double kRidgeHeadroom = 4;  // the value axis reaches at least this factor above the peak

// Whole decades, so the logarithmic axes tick at powers of ten.
double decade_below(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decade_above(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

QCPGraph* add_hollow_dots(QCustomPlot* plot, const QString& name, QColor color) {
  QCPGraph* g = add_graph(plot, name, color, Look::Scatter);
  g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, color, Qt::white, 7));
  g->setVisible(false);
  g->removeFromLegend();
  return g;
}

QCPGraph* add_roof(QCustomPlot* plot) {
  QCPGraph* g = add_graph(plot, QString(), kRoofColor, Look::Line);
  g->setPen(QPen(kRoofColor, 2.2));
  return g;
}

}  // namespace

RooflineView::RooflineView(QWidget* parent) : QCustomPlot(parent) {
  note_ = setup_plot(this, {"roofline", QStringLiteral("FLOP/s"), Unit::FlopsPerSecond});
  xAxis->setLabel(QStringLiteral("arithmetic intensity (FLOP per byte read)"));
  set_log_axis_unit(xAxis, Unit::FlopsPerByte);
  set_log_axis_unit(yAxis, Unit::FlopsPerSecond);
  // Both axes pan and zoom: neither is the dashboard's shared time axis.
  axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
  axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);

  memory_roof = add_roof(this);
  compute_roof = add_roof(this);
  compute_roof->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, kRoofColor, kRoofColor, 7));  // the ridge
  prefill = add_graph(this, QStringLiteral("prefill steps"), kPrefillColor, Look::Scatter);
  decode = add_graph(this, QStringLiteral("decode-only steps"), kDecodeColor, Look::Scatter);
  prefill_b = add_hollow_dots(this, QStringLiteral("prefill steps"), kPrefillColor);
  decode_b = add_hollow_dots(this, QStringLiteral("decode-only steps"), kDecodeColor);
  dots_ = {{prefill, {}}, {decode, {}}, {prefill_b, {}}, {decode_b, {}}};
  for (QCPGraph* roof : {memory_roof, compute_roof}) roof->removeFromLegend();
  fit_legend_to_width(this, 2);

  ridge_label = new QCPItemText(this);
  ridge_label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
  ridge_label->setPadding(QMargins(2, 0, 6, 4));
  ridge_label->setColor(kRoofColor);
  ridge_label->setFont(QFont(font().family(), 8, QFont::Bold));
  ridge_label->setVisible(false);

  install_hover(this, [this](QPointF pos) { return hover_at(pos); });
  fit_axes();
  show_note();
}

void RooflineView::set_roofs(const MachineRoofs& roofs) {
  roofs_ = roofs;
  const double ridge = roofs.ridge_intensity(), peak = roofs.peak_flops_per_second;
  memory_roof->setData({kRoofFrom, ridge}, {roofs.read_bytes_per_second * kRoofFrom, peak}, true);
  compute_roof->setData({ridge, kRoofTo}, {peak, peak}, true);
  memory_roof->setName(QStringLiteral("memory roof: ") + format_value(roofs.read_bytes_per_second, Unit::BytesPerSecond));
  compute_roof->setName(QStringLiteral("compute roof: ") + format_value(peak, Unit::FlopsPerSecond));
  for (QCPGraph* roof : {memory_roof, compute_roof}) roof->addToLegend();
  ridge_label->position->setCoords(ridge, peak);
  ridge_label->setText(QStringLiteral("ridge %1").arg(format_value(ridge, Unit::FlopsPerByte)));
  ridge_label->setVisible(true);
  fit_axes();
  show_note();
  replot(rpQueuedReplot);
}

void RooflineView::update_from(const EngineMetricsSnapshot& s) {
  not_reported_ = not_reported_note(s, "roofline");
  show_steps(not_reported_.isEmpty() ? &s : nullptr, prefill, decode);
  fit_axes();
  show_note();
  replot(rpQueuedReplot);
}

void RooflineView::set_overlay(const EngineMetricsSnapshot* other) {
  for (QCPGraph* g : {prefill_b, decode_b}) {
    g->setVisible(other != nullptr);
    if (other) g->addToLegend();
    else g->removeFromLegend();
  }
  show_steps(other, prefill_b, decode_b);
  fit_axes();
  replot(rpQueuedReplot);
}

void RooflineView::clear() {
  not_reported_.clear();
  show_steps(nullptr, prefill, decode);
  show_steps(nullptr, prefill_b, decode_b);
  fit_axes();
  show_note();
  replot(rpQueuedReplot);
}

void RooflineView::show_steps(const EngineMetricsSnapshot* s, QCPGraph* prefill_graph, QCPGraph* decode_graph) {
  std::vector<RooflinePoint> points = s ? roofline_points(*s) : std::vector<RooflinePoint>{};
  // QCustomPlot keeps a graph's data sorted by key: sort first, so each point's step stays beside it.
  std::sort(points.begin(), points.end(), [](const RooflinePoint& a, const RooflinePoint& b) { return a.intensity < b.intensity; });
  for (QCPGraph* graph : {prefill_graph, decode_graph}) {
    Dots& dots = *std::find_if(dots_.begin(), dots_.end(), [&](const Dots& d) { return d.graph == graph; });
    dots.steps.clear();
    QVector<double> x, y;
    for (const RooflinePoint& p : points) {
      if (p.prefill != (graph == prefill_graph)) continue;
      x.push_back(p.intensity);
      y.push_back(p.flops_per_second);
      dots.steps.push_back(s->steps[p.step]);
    }
    graph->setData(x, y, true);
  }
}

void RooflineView::fit_axes() {
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = 0, y_lo = x_lo, y_hi = 0;
  auto include = [&](double x, double y) {
    x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x), y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
  };
  for (const Dots& dots : dots_) {
    if (!dots.graph->visible()) continue;
    for (auto it = dots.graph->data()->constBegin(); it != dots.graph->data()->constEnd(); ++it) include(it->key, it->value);
  }
  // Room above the ridge for its label.
  if (roofs_.known()) include(roofs_.ridge_intensity(), kRidgeHeadroom * roofs_.peak_flops_per_second);
  if (x_hi <= 0) x_lo = 0.1, x_hi = 1000, y_lo = 1e8, y_hi = 1e12;  // nothing yet: a typical CPU's span
  xAxis->setRange(decade_below(x_lo / kMargin), decade_above(x_hi * kMargin));
  yAxis->setRange(decade_below(y_lo / kMargin), decade_above(y_hi * kMargin));
}

void RooflineView::show_note() { note_->setText(note()); }

QString RooflineView::note() const {
  if (!not_reported_.isEmpty()) return not_reported_;
  if (!roofs_.known()) return QStringLiteral("measuring the machine…");
  return prefill->dataCount() + decode->dataCount() == 0 ? QStringLiteral("waiting for the first engine step") : QString();
}

const RooflineView::Dots* RooflineView::dots_of(const QCPAbstractPlottable* graph) const {
  for (const Dots& dots : dots_)
    if (dots.graph == graph) return &dots;
  return nullptr;
}

QString RooflineView::hover_at(QPointF pos) {
  const HoverHit hit = point_under(*this, pos);
  const Dots* dots = dots_of(hit.plottable);
  if (!dots) return hit.plottable ? hit.plottable->name() : QString();  // a roof's corner: its name
  const StepMetrics& step = dots->steps[static_cast<size_t>(hit.index)];
  const double bytes = step.weight_bytes_read + step.kv_bytes_read, intensity = step.flops / bytes;
  const double achieved = step.flops / step.duration_s;
  QString text = QStringLiteral("%1 step at t = %2 s%3\n")
                     .arg(step.prefill_tokens > 0 ? QStringLiteral("prefill") : QStringLiteral("decode-only"))
                     .arg(step.time_s, 0, 'f', 3)
                     .arg(dots->graph == prefill_b || dots->graph == decode_b ? QStringLiteral(" (second run)") : QString());
  text += QStringLiteral("%1 prefill + %2 decode tokens · %3 requests\n")
              .arg(step.prefill_tokens)
              .arg(step.decode_tokens)
              .arg(step.sequences.size());
  text += QStringLiteral("%1 in %2: %3\n")
              .arg(format_value(step.flops, Unit::Flops), format_value(step.duration_s, Unit::Seconds),
                   format_value(achieved, Unit::FlopsPerSecond));
  text += QStringLiteral("read %1 (weights %2 + K/V %3): %4")
              .arg(format_value(bytes, Unit::Bytes), format_value(step.weight_bytes_read, Unit::Bytes),
                   format_value(step.kv_bytes_read, Unit::Bytes), format_value(intensity, Unit::FlopsPerByte));
  if (roofs_.known()) {
    const bool memory_bound = intensity < roofs_.ridge_intensity();
    text += QStringLiteral("\n%1% of the roof here (%2-bound: %3 the ridge)")
                .arg(100 * achieved / roofs_.attainable(intensity), 0, 'f', 0)
                .arg(memory_bound ? QStringLiteral("memory") : QStringLiteral("compute"))
                .arg(memory_bound ? QStringLiteral("left of") : QStringLiteral("right of"));
  }
  return text;
}

}  // namespace inferscope::gui
