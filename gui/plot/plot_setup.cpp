#include "gui/plot/plot_setup.h"

#include "gui/help/help_button.h"

#include <QAbstractScrollArea>
#include <QCoreApplication>
#include <QScrollBar>
#include <QWheelEvent>
#include <algorithm>
#include <vector>

namespace inferscope::gui {
namespace {

// The wheel over a chart scrolls what holds it (the dashboard's scroll area), as it does everywhere
// else in the window; Ctrl+wheel zooms the chart's time axis.
class WheelScrolls : public QObject {
 public:
  using QObject::QObject;

  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() != QEvent::Wheel) return false;
    if (static_cast<QWheelEvent*>(event)->modifiers() & Qt::ControlModifier) return false;
    for (QWidget* w = static_cast<QWidget*>(watched)->parentWidget(); w; w = w->parentWidget()) {
      if (auto* scroll = qobject_cast<QAbstractScrollArea*>(w)) {
        QCoreApplication::sendEvent(scroll->verticalScrollBar(), event);
        break;
      }
    }
    return true;  // never a zoom without Ctrl, even where nothing scrolls
  }
};

// Keeps a plot's legend lines as wide as the plot: entries per line by their measured widths. Once
// grow() is called, the plot's minimum height also grows past that base by each legend line after the
// first and by a top time axis, so the data keeps the height the plot was given for it.
class LegendFits : public QObject {
 public:
  LegendFits(QCustomPlot* plot, int most) : QObject(plot), plot_(plot), most_(most) {}

  void grow() {
    base_height_ = plot_->minimumHeight();
    fit();
  }

  void fit() {
    wrap_lines();
    if (base_height_ < 0) return;
    QCPLegend* legend = plot_->legend;
    int extra = 0;
    const int items = legend->visible() ? legend->itemCount() : 0;
    if (items > 0) {
      const int lines = (items + legend->wrap() - 1) / std::max(1, legend->wrap());
      const QCPAbstractLegendItem* first = legend->item(0);
      const int line = (first ? first->minimumOuterSizeHint().height() : 14) + legend->rowSpacing();
      extra += (lines - 1) * line;
    }
    if (plot_->xAxis2->visible() && plot_->xAxis2->tickLabels()) extra += QFontMetrics(plot_->xAxis2->tickLabelFont()).height() + 8;
    plot_->setMinimumHeight(base_height_ + extra);
  }

  void wrap_lines() {
    QCPLegend* legend = plot_->legend;
    std::vector<int> widths;
    for (int i = 0; i < legend->itemCount(); ++i)
      if (const QCPAbstractLegendItem* item = legend->item(i)) widths.push_back(item->minimumOuterSizeHint().width());  // cells may be empty
    std::sort(widths.rbegin(), widths.rend());
    // As many of the widest entries as fit side by side: then every line fits.
    const int room = plot_->width() - legend->margins().left() - legend->margins().right() - 8;
    int wrap = 1, used = widths.empty() ? 0 : widths.front();
    while (wrap < most_ && wrap < static_cast<int>(widths.size()) && used + legend->columnSpacing() + widths[static_cast<size_t>(wrap)] <= room) {
      used += legend->columnSpacing() + widths[static_cast<size_t>(wrap)];
      ++wrap;
    }
    if (legend->wrap() == wrap) return;
    legend->setWrap(wrap);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);  // re-flow the entries
  }

  bool eventFilter(QObject*, QEvent* event) override {
    if (event->type() == QEvent::Resize) fit();
    return false;
  }

 private:
  QCustomPlot* plot_;
  int most_;
  int base_height_ = -1;  // the minimum height before the legend's extra lines; -1: not grown
};

}  // namespace

QCPItemText* setup_plot(QCustomPlot* plot, const PlotSpec& spec) {
  const HelpText& help = help_text(spec.name);
  plot->setObjectName(QLatin1String(spec.name));
  attach_help(plot, help);
  plot->setMinimumSize(240, 170);
  plot->setAntialiasedElements(QCP::aePlottables);
  plot->setNoAntialiasingOnDrag(true);

  plot->plotLayout()->insertRow(0);
  auto* title = new QCPTextElement(plot, help.title, QFont(plot->font().family(), 10, QFont::Bold));
  plot->plotLayout()->addElement(0, 0, title);

  QFont tick_font = plot->font();
  tick_font.setPointSize(8);
  for (QCPAxis* axis : {plot->xAxis, plot->yAxis, plot->yAxis2}) {
    axis->setTickLabelFont(tick_font);
    axis->setLabelFont(tick_font);
    axis->grid()->setPen(QPen(QColor(0, 0, 0, 28), 1, Qt::DotLine));
  }
  plot->xAxis->setLabel(QStringLiteral("seconds since engine start"));
  plot->yAxis->setLabel(spec.y_label);
  set_axis_unit(plot->yAxis, spec.y_unit);
  plot->xAxis->setRange(0, 1);

  // The legend sits in its own row under the title, so it never hides data.
  legend_in_own_row(plot, 1);
  plot->plotLayout()->setRowStretchFactor(0, 0.001);

  // Horizontal drag and Ctrl+wheel zoom on the shared time axis, never before time 0; the value axis
  // follows the data.
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  plot->axisRect()->setRangeDrag(Qt::Horizontal);
  plot->axisRect()->setRangeZoom(Qt::Horizontal);
  scroll_with_wheel(plot);
  QObject::connect(plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), plot, [plot](const QCPRange& r) {
    if (r.lower < 0) plot->xAxis->setRange(0, r.size());
  });

  auto* note = new QCPItemText(plot);
  note->position->setType(QCPItemPosition::ptAxisRectRatio);
  note->position->setCoords(0.5, 0.5);
  note->setColor(QColor(110, 110, 110));
  note->setFont(QFont(plot->font().family(), 10, -1, true));
  note->setClipToAxisRect(false);
  return note;
}

void legend_in_own_row(QCustomPlot* plot, int row) {
  QFont font = plot->font();
  font.setPointSize(8);
  plot->legend->setFont(font);
  plot->legend->setBrush(Qt::NoBrush);
  plot->legend->setBorderPen(Qt::NoPen);
  plot->legend->setIconSize(14, 8);
  plot->legend->setVisible(true);
  plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  plot->legend->setColumnSpacing(10);
  plot->legend->setMargins(QMargins(2, 0, 2, 0));
  plot->axisRect()->insetLayout()->take(plot->legend);
  plot->plotLayout()->insertRow(row);
  plot->plotLayout()->addElement(row, 0, plot->legend);
  plot->plotLayout()->setRowStretchFactor(row, 0.001);
  plot->plotLayout()->setRowSpacing(0);
  fit_legend_to_width(plot, 3);
}

void scroll_with_wheel(QCustomPlot* plot) { plot->installEventFilter(new WheelScrolls(plot)); }

namespace {

// The plot's legend fitter (LegendFits has no meta-object of its own, so findChild cannot tell it apart).
LegendFits* legend_fits_of(QCustomPlot* plot) {
  for (QObject* child : plot->children())
    if (auto* fits = dynamic_cast<LegendFits*>(child)) return fits;
  return nullptr;
}

}  // namespace

void fit_legend_to_width(QCustomPlot* plot, int most) {
  delete legend_fits_of(plot);
  auto* fits = new LegendFits(plot, most);
  plot->installEventFilter(fits);
  fits->fit();
}

void refit_legend(QCustomPlot* plot) {
  if (LegendFits* fits = legend_fits_of(plot)) fits->fit();
}

void grow_with_legend(QCustomPlot* plot) {
  if (LegendFits* fits = legend_fits_of(plot)) fits->grow();
}

void show_top_time_axis(QCustomPlot* plot, bool shown, const QString& label) {
  plot->xAxis2->setVisible(shown);
  if (!shown) return;
  plot->xAxis2->setTickLabels(true);
  plot->xAxis2->setLabel(label);
  plot->xAxis2->setTicker(plot->xAxis->ticker());
}

QCustomPlot* make_plot(QWidget* parent, const PlotSpec& spec, QCPItemText** note) {
  auto* plot = new QCustomPlot(parent);
  *note = setup_plot(plot, spec);
  return plot;
}

QCPGraph* add_graph(QCustomPlot* plot, const QString& name, QColor color, Look look, QCPAxis* value_axis) {
  QCPGraph* g = plot->addGraph(plot->xAxis, value_axis ? value_axis : plot->yAxis);
  g->setName(name);
  g->setPen(QPen(color, 1.6));
  switch (look) {
    case Look::Scatter:
      g->setLineStyle(QCPGraph::lsNone);
      // A solid rim round a translucent disc: a dot drawn on another leaves it in view.
      g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, QColor(color.red(), color.green(), color.blue(), 110), 7));
      break;
    case Look::Area:
      g->setBrush(QColor(color.red(), color.green(), color.blue(), 45));
      break;
    case Look::Line:
      break;
  }
  return g;
}

QCPGraph* add_overlay_graph(QCustomPlot* plot, const QCPGraph* like) {
  QCPGraph* g = plot->addGraph(like->keyAxis(), like->valueAxis());
  QPen pen = like->pen();
  pen.setStyle(Qt::DashLine);
  g->setPen(pen);
  g->setLineStyle(like->lineStyle());
  QCPScatterStyle scatter = like->scatterStyle();
  // Hollow rings: the first run's dots show through the second's.
  if (scatter.shape() != QCPScatterStyle::ssNone) scatter = QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(pen.color(), 1.6), QBrush(Qt::NoBrush), 8);
  g->setScatterStyle(scatter);
  g->setVisible(false);
  g->removeFromLegend();
  return g;
}

QCPBars* add_bars(QCustomPlot* plot, const QString& name, QColor color) {
  auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
  bars->setName(name);
  bars->setPen(QPen(color.darker(115), 1));
  bars->setBrush(color);
  bars->setWidthType(QCPBars::wtPlotCoords);
  return bars;
}

QCPGraph* add_preemption_marks(QCustomPlot* plot) {
  QCPAxis* axis = plot->axisRect()->addAxis(QCPAxis::atRight);
  axis->setVisible(false);
  axis->setRange(0, 0.5);  // every count (at least 1) reaches past the top: full-height lines
  QCPGraph* g = plot->addGraph(plot->xAxis, axis);
  g->setName(QStringLiteral("preemptions"));
  g->setLineStyle(QCPGraph::lsImpulse);
  g->setPen(QPen(QColor(214, 39, 40, 170), 1.4, Qt::DashLine));
  g->removeFromLegend();
  return g;
}

}  // namespace inferscope::gui
