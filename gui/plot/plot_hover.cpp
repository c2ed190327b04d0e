#include "gui/plot/plot_hover.h"

#include <QHelpEvent>
#include <QToolTip>
#include <cmath>
#include <limits>
#include <qcustomplot.h>

#include "gui/plot/plot_units.h"

namespace inferscope::gui {

namespace {

struct Hit {
  QCPAbstractPlottable* plottable = nullptr;
  int index = -1;
  double distance = std::numeric_limits<double>::infinity();
};

// The sum of the bars stacked below `bars` at `key` (all values here are positive).
double stacked_base(const QCPBars* bars, double key) {
  double base = 0;
  for (const QCPBars* b = bars->barBelow(); b; b = b->barBelow()) {
    auto it = b->data()->findBegin(key, false);
    if (it != b->data()->constEnd() && it->key == key) base += it->value;
  }
  return base;
}

// Distance from `pos` to point i: for bars the horizontal distance while the mouse is over the bar's
// height, for full-height marks (impulses) the horizontal distance, else the distance to the point.
double distance_to(QCPAbstractPlottable* p, int i, QPointF pos) {
  const QPointF at = p->interface1D()->dataPixelPosition(i);
  if (auto* graph = qobject_cast<QCPGraph*>(p); graph && graph->lineStyle() == QCPGraph::lsImpulse)
    return std::fabs(at.x() - pos.x());
  if (auto* bars = qobject_cast<QCPBars*>(p)) {
    const double base = bars->valueAxis()->coordToPixel(bars->baseValue() + stacked_base(bars, bars->data()->at(i)->key));
    const double top = std::min(base, at.y()), bottom = std::max(base, at.y());
    if (pos.y() < top - kHoverRadiusPx || pos.y() > bottom + kHoverRadiusPx) return std::numeric_limits<double>::infinity();
    return std::fabs(at.x() - pos.x());
  }
  return std::hypot(at.x() - pos.x(), at.y() - pos.y());
}

// The nearest point of a plottable among those near the mouse's time.
Hit nearest_in(QCPAbstractPlottable* p, QPointF pos) {
  Hit best;
  QCPPlottableInterface1D* data = p->interface1D();
  if (!data || !p->visible() || data->dataCount() == 0) return best;
  const double k0 = p->keyAxis()->pixelToCoord(pos.x() - kHoverRadiusPx);
  const double k1 = p->keyAxis()->pixelToCoord(pos.x() + kHoverRadiusPx);
  const int begin = data->findBegin(std::min(k0, k1), true), end = data->findEnd(std::max(k0, k1), true);
  for (int i = begin; i < end; ++i) {
    if (std::isnan(data->dataMainValue(i))) continue;
    const double d = distance_to(p, i, pos);
    if (d < best.distance) best = Hit{p, i, d};
  }
  return best;
}

// One line: "name (label): value".
QString value_line(QCPAbstractPlottable* p, int i) {
  QString line = p->name();
  const QStringList labels = p->property("point_labels").toStringList();
  if (i < labels.size()) line += QStringLiteral(" (") + labels[i] + QLatin1Char(')');
  return line + QStringLiteral(": ") + format_value(p->interface1D()->dataMainValue(i), unit_of(p->valueAxis()));
}

}  // namespace

HoverHit point_under(QCustomPlot& plot, QPointF pos) {
  Hit best;
  for (int i = 0; i < plot.plottableCount(); ++i) {
    const Hit h = nearest_in(plot.plottable(i), pos);
    if (h.distance < best.distance) best = h;
  }
  if (!best.plottable || best.distance > kHoverRadiusPx) return {};
  return {best.plottable, best.index};
}

QString hover_text(QCustomPlot& plot, QPointF pos) {
  const HoverHit best = point_under(plot, pos);
  if (!best.plottable) return {};
  const double key = best.plottable->interface1D()->dataMainKey(best.index);
  // A plot whose key is not time names it (property "key_name": "draft position 2").
  const QString key_name = plot.property("key_name").toString();
  const Unit key_unit = unit_of(best.plottable->keyAxis());
  const QString key_text = key_unit == Unit::Count ? QString::number(key) : format_value(key, key_unit);
  QString text = key_name.isEmpty() ? QStringLiteral("t = %1 s").arg(key, 0, 'f', 3) : key_name + QLatin1Char(' ') + key_text;
  text += QLatin1Char('\n') + value_line(best.plottable, best.index);
  // Every other series with a point at exactly this time (the same step) joins the text.
  for (int j = 0; j < plot.plottableCount(); ++j) {
    QCPAbstractPlottable* p = plot.plottable(j);
    QCPPlottableInterface1D* data = p->interface1D();
    if (p == best.plottable || !p->visible() || !data || data->dataCount() == 0) continue;
    const int i = data->findBegin(key, false);
    if (i < data->dataCount() && data->dataMainKey(i) == key && !std::isnan(data->dataMainValue(i)))
      text += QLatin1Char('\n') + value_line(p, i);
  }
  return text;
}

namespace {

class HoverFilter : public QObject {
 public:
  HoverFilter(QCustomPlot* plot, HoverText text) : QObject(plot), plot_(plot), text_(std::move(text)) {}

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (watched != plot_) return false;
    if (event->type() == QEvent::ToolTip) {
      auto* help = static_cast<QHelpEvent*>(event);
      show(help->pos(), help->globalPos());
      return true;
    }
    // While a tooltip is up, it follows the mouse from point to point.
    if (event->type() == QEvent::MouseMove && QToolTip::isVisible()) {
      auto* move = static_cast<QMouseEvent*>(event);
      show(move->position().toPoint(), move->globalPosition().toPoint());
    }
    return false;
  }

 private:
  void show(QPoint pos, QPoint global) {
    const QString values = text_(pos);
    QToolTip::showText(global, values.isEmpty() ? plot_->toolTip() : values, plot_);
  }
  QCustomPlot* plot_;
  HoverText text_;
};

}  // namespace

void install_hover(QCustomPlot* plot, HoverText text) {
  if (!text) text = [plot](QPointF pos) { return hover_text(*plot, pos); };
  plot->installEventFilter(new HoverFilter(plot, std::move(text)));
}

}  // namespace inferscope::gui
