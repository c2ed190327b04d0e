#include "gui/dashboard/metrics_dashboard.h"

#include <QDir>
#include <QGridLayout>
#include <QLabel>
#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <qcustomplot.h>
#include <tuple>
#include <vector>

#include "core/engine/step_metrics.h"
#include "gui/dashboard/metrics_series.h"
#include "gui/dashboard/not_reported.h"
#include "gui/dashboard/request_timeline.h"
#include "gui/dashboard/roofline_view.h"
#include "gui/dashboard/series_colors.h"
#include "gui/dashboard/spec_plots.h"
#include "gui/plot/event_marks.h"
#include "gui/plot/plot_export.h"
#include "gui/plot/plot_hover.h"
#include "gui/plot/plot_setup.h"

using inferscope::EngineMetricsSnapshot;
using inferscope::kServerLatencies;
using inferscope::ServerLatency;
using inferscope::StepMetrics;
using namespace inferscope::gui;

namespace {

// One colour per quantity, the same in every plot and in the overlay (dashed there).
// (The lines drawn straight from a step metric take theirs from core/engine/step_metrics.h.)
const QColor kHits(23, 190, 207), kHitsRecent(188, 189, 34), kE2e(148, 103, 189), kQueue(140, 86, 75);

constexpr int kPlotMinWidth = 360;  // a column per this many pixels of width, 1 to 4 columns
constexpr double kApartRatio = 20;  // two runs' highest values this far apart put a value axis on a log scale
constexpr int kMaxConfigMarks = 64;  // configuration changes marked on the time plots, newest kept

// What to skip: an update whose snapshot changed none of the drawn quantities (an idle engine).
using Signature = std::tuple<int64_t, size_t, size_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, std::string,
                             std::string, std::vector<std::string>, std::string>;
Signature signature_of(const EngineMetricsSnapshot& s) {
  return {s.num_steps, s.steps.size(), s.requests.size(), s.requests_finished, s.generation_tokens_total,
          s.prompt_tokens_total, s.num_preemptions, s.kv.prefix_cache_queries, s.spec.num_draft_tokens, s.spec_mode,
          s.source, s.not_reported, s.source_error};
}

// Empties a graph's or bars' points.
void clear_points(QCPAbstractPlottable* p) {
  if (auto* graph = qobject_cast<QCPGraph*>(p)) graph->data()->clear();
  if (auto* bars = qobject_cast<QCPBars*>(p)) bars->data()->clear();
}

void set_series(QCPGraph* g, const Series& s) {
  g->setData(s.x, s.y, true);
  if (s.ids.isEmpty()) return;
  QStringList labels;
  for (int32_t id : s.ids) labels << QStringLiteral("request %1").arg(id);
  g->setProperty("point_labels", labels);
}

}  // namespace

struct MetricsDashboard::Impl {
  struct Panel {
    QCustomPlot* plot = nullptr;
    QCPItemText* note = nullptr;  // null for a view that keeps its own note and value axes
    QCPGraph* marks = nullptr;    // preemption lines (time plots only)
    std::optional<EventMarks> config_marks;  // configuration changes (time plots only)
    double fraction_cap = 0;      // > 0: the value axis shows a fraction, at most this
    std::function<QString()> idle;  // the note while it has nothing to show
    QString not_reported;         // the note while the snapshot's source does not report its quantity
  };
  // A graph's legend/CSV name without the comparison label; `overlay` graphs take label B.
  struct Named {
    QCPAbstractPlottable* plottable;
    QString base;
    bool overlay;
  };

  QGridLayout* grid = nullptr;
  // Above the panels, for a server: which releases its metric names fit, what it does not publish.
  QLabel* source_line = nullptr;
  int columns = 0;
  std::vector<Panel> panels;
  std::vector<Named> names;

  // A remote server's own figures, on the panels of the same quantity, in the legend only when present:
  // its latency percentiles (p50, p99 per ServerLatency) and its gauges.
  std::array<std::array<QCPGraph*, 2>, kServerLatencies> server_latency{};
  QCPGraph *server_hit_rate = nullptr, *server_acceptance = nullptr, *server_accept_length = nullptr;
  QCPGraph *e2e = nullptr, *queue = nullptr, *itl = nullptr, *e2e_b = nullptr;
  QCPGraph *ttft = nullptr, *rate = nullptr, *hits = nullptr, *hits_recent = nullptr;
  QCPBars *cached = nullptr, *prefill = nullptr, *decode = nullptr;
  QCPGraph* usage_marks = nullptr;  // the preemption lines that get a legend entry
  QCPGraph *ttft_b = nullptr, *rate_b = nullptr, *tokens_b = nullptr, *hits_b = nullptr;
  // The lines drawn straight from a step metric, each with run B's line where its row asks for one.
  struct TableLine {
    const inferscope::StepMetric* metric;
    QCPGraph* a;
    QCPGraph* b;  // null: no overlay
  };
  std::vector<TableLine> table_lines;

  std::unique_ptr<SpecPlots> spec;
  QCPGraph* spec_window_b = nullptr;
  RooflineView* roofline = nullptr;
  RequestTimeline* timeline = nullptr;
  QVector<TimeMark> config_changes;
  PrefixHitHistory prefix;
  PreemptionHistory preemptions;
  std::optional<EngineMetricsSnapshot> overlay;
  QString label_a, label_b;
  bool own_clock = false;  // the overlay is drawn against the top time axis (set_overlay)
  std::pair<double, double> span{0, 0}, overlay_span{0, 0};
  double uptime = 0;
  QString source_error;  // why the remote source's last poll failed: said by every panel with nothing to draw
  std::optional<Signature> last;
  bool following = true;  // the time axis follows the data until the user drags or zooms it
  bool syncing = false;   // set while this code moves the axes (so it is not taken for the user)

  Panel& add_panel(QWidget* parent, const PlotSpec& spec, bool time_axis, double fraction_cap);
  // A view that draws itself (notes, value axes, hover): the roofline, the request timeline.
  void add_view(QCustomPlot* view, bool time_axis);
  void show_config_changes();
  void name(QCPAbstractPlottable* p, const QString& base, bool is_overlay) { names.push_back({p, base, is_overlay}); }
  QCPGraph* overlay_of(QCPGraph* g) {
    QCPGraph* b = add_overlay_graph(g->parentPlot(), g);
    name(b, g->name(), true);
    return b;
  }
  // The table's lines of `plot`'s panel (its objectName), then their overlays.
  void add_table_lines(QCustomPlot* plot);
  void apply_names();
  // The decode throughput line says how a server measures it; its legend fits the new name.
  void name_rate(const QString& base);
  // The source line: "vLLM at http://h:8000: metrics of vLLM 0.9.1. Not published: ...", hidden for
  // the local engine and for a server the release table does not know.
  void show_source(const EngineMetricsSnapshot& s);
  void draw_overlay();
  // The overlay's series against the bottom time axis, or against the top one fitted to its span.
  void place_overlay_clock(const std::vector<QCPAbstractPlottable*>& series);
  void set_x_range(const QCPRange& range, const QCustomPlot* except);
  void follow_data();
  void fit_value_axes();
  void refresh();
  // Plots with a note whose quantity `s` does not report take that note and lose their points.
  void blank_not_reported(const EngineMetricsSnapshot& s);
  // Empties the points of one run (the main one, or the overlay) in the panels `s` does not report.
  void clear_unreported(const EngineMetricsSnapshot& s, bool overlay_run);
  void lay_out(int n_columns);
  // The p50 and p99 lines of a server's `latency` histogram on `axis` of `plot`, named after `what`.
  void add_server_latency(QCustomPlot* plot, ServerLatency latency, const QString& what, const QColor& colour, QCPAxis* axis);
  std::vector<QCPGraph*> server_graphs() const;
};

void MetricsDashboard::Impl::add_table_lines(QCustomPlot* plot) {
  const size_t first = table_lines.size();
  for (const inferscope::StepMetric& m : inferscope::step_metrics_table()) {
    if (m.look == inferscope::MetricLook::None || QString::fromStdString(m.panel) != plot->objectName()) continue;
    const Look look = m.look == inferscope::MetricLook::Area ? Look::Area : Look::Line;
    QCPGraph* a = add_graph(plot, QString::fromStdString(m.line), QColor::fromRgb(m.rgb), look, m.right_axis ? plot->yAxis2 : plot->yAxis);
    name(a, a->name(), false);
    table_lines.push_back({&m, a, nullptr});
  }
  for (size_t i = first; i < table_lines.size(); ++i)
    if (table_lines[i].metric->overlay) table_lines[i].b = overlay_of(table_lines[i].a);
}

void MetricsDashboard::Impl::add_server_latency(QCustomPlot* plot, ServerLatency latency, const QString& what,
                                                const QColor& colour, QCPAxis* axis) {
  auto& lines = server_latency[static_cast<size_t>(latency)];
  lines[0] = add_graph(plot, QObject::tr("server %1 p50 (10 s, all clients)").arg(what), colour.darker(140), Look::Line, axis);
  lines[1] = add_graph(plot, QObject::tr("server %1 p99 (10 s, all clients)").arg(what), colour.lighter(140), Look::Line, axis);
}

std::vector<QCPGraph*> MetricsDashboard::Impl::server_graphs() const {
  std::vector<QCPGraph*> out{server_hit_rate, server_acceptance, server_accept_length};
  for (const auto& lines : server_latency) out.insert(out.end(), lines.begin(), lines.end());
  return out;
}

void MetricsDashboard::Impl::lay_out(int n_columns) {
  if (n_columns == columns) return;
  columns = n_columns;
  grid->removeWidget(source_line);
  for (const Panel& panel : panels) grid->removeWidget(panel.plot);
  grid->addWidget(source_line, 0, 0, 1, columns);
  for (size_t i = 0; i < panels.size(); ++i)
    grid->addWidget(panels[i].plot, 1 + static_cast<int>(i) / columns, static_cast<int>(i) % columns);
}

MetricsDashboard::Impl::Panel& MetricsDashboard::Impl::add_panel(QWidget* parent, const PlotSpec& spec, bool time_axis,
                                                               double fraction_cap) {
  Panel panel;
  panel.plot = make_plot(parent, spec, &panel.note);
  panel.fraction_cap = fraction_cap;
  if (time_axis) {
    panel.marks = add_preemption_marks(panel.plot);
    panel.config_marks.emplace(panel.plot);
  }
  panel.idle = [] { return QStringLiteral("waiting for the first engine step"); };
  install_hover(panel.plot);
  grow_with_legend(panel.plot);
  panels.push_back(panel);
  return panels.back();
}

void MetricsDashboard::Impl::add_view(QCustomPlot* view, bool time_axis) {
  Panel panel;
  panel.plot = view;
  if (time_axis) {
    panel.marks = add_preemption_marks(view);
    panel.config_marks.emplace(view);
  }
  panels.push_back(panel);
}

void MetricsDashboard::Impl::show_config_changes() {
  for (Panel& panel : panels)
    if (panel.config_marks) panel.config_marks->set(config_changes);
}

void MetricsDashboard::Impl::apply_names() {
  for (const Named& n : names) {
    const QString& label = n.overlay ? label_b : label_a;
    const bool top = n.plottable->keyAxis() == n.plottable->parentPlot()->xAxis2;
    n.plottable->setName(overlay && !label.isEmpty() ? n.base + QStringLiteral(" · ") + label + (top ? QStringLiteral(" · top axis") : QString())
                                                     : n.base);
  }
}

void MetricsDashboard::Impl::show_source(const EngineMetricsSnapshot& s) {
  source_line->setVisible(!s.source_release.empty());
  if (s.source_release.empty()) return;
  QString text = QObject::tr("%1: metrics of %2.").arg(QString::fromStdString(s.source), QString::fromStdString(s.source_release));
  if (!s.source_unpublished.empty()) text += QObject::tr(" Not published by the server: %1.").arg(QString::fromStdString(s.source_unpublished));
  source_line->setText(text);
}

void MetricsDashboard::Impl::name_rate(const QString& base) {
  bool changed = false;
  for (Named& n : names) {
    if ((n.plottable != rate && n.plottable != rate_b) || n.base == base) continue;
    n.base = base;
    changed = true;
  }
  if (!changed) return;
  apply_names();
  refit_legend(rate->parentPlot());
}

void MetricsDashboard::Impl::draw_overlay() {
  const bool on = overlay.has_value();
  spec->set_overlay(on ? &*overlay : nullptr, label_a, label_b);
  roofline->set_overlay(on ? &*overlay : nullptr);
  // The lanes' tags are the runs' names without their notes ("B" of "B simulated (dry run)").
  timeline->set_overlay(on ? &*overlay : nullptr, label_a.section(' ', 0, 0), label_b.section(' ', 0, 0), own_clock);
  std::vector<QCPGraph*> graphs_b = {ttft_b, e2e_b, rate_b, tokens_b, hits_b, spec_window_b};
  for (const TableLine& line : table_lines)
    if (line.b) graphs_b.push_back(line.b);
  for (QCPGraph* g : graphs_b) {
    g->setVisible(on);
    if (on) {
      g->addToLegend();
    } else {
      g->removeFromLegend();
      g->data()->clear();
    }
  }
  overlay_span = {0, 0};
  if (on) overlay_span = time_span(*overlay);
  place_overlay_clock({graphs_b.begin(), graphs_b.end()});
  if (!on) return;
  const EngineMetricsSnapshot& s = *overlay;
  set_series(ttft_b, ttft_series(s));
  set_series(e2e_b, e2e_series(s));
  set_series(rate_b, decode_rate_series(s));
  set_series(tokens_b, step_series(s, [](const StepMetrics& m) { return double(m.prefill_tokens + m.decode_tokens); }));
  for (const TableLine& line : table_lines)
    if (line.b) set_series(line.b, step_series(s, line.metric->value));
  set_series(spec_window_b, acceptance_window_series(s));
  // Only its totals are known: the run's overall hit rate, drawn flat across the run.
  hits_b->data()->clear();
  if (s.kv.prefix_cache_queries > 0) {
    const double rate_b_value = double(s.kv.prefix_cache_hits) / double(s.kv.prefix_cache_queries);
    hits_b->setData({overlay_span.first, overlay_span.second}, {rate_b_value, rate_b_value}, true);
  }
  clear_unreported(s, true);
}

void MetricsDashboard::Impl::place_overlay_clock(const std::vector<QCPAbstractPlottable*>& series) {
  const bool top = overlay.has_value() && own_clock;
  for (QCPAbstractPlottable* p : series) p->setKeyAxis(top ? p->parentPlot()->xAxis2 : p->parentPlot()->xAxis);
  const double pad = std::max(0.02 * (overlay_span.second - overlay_span.first), 1e-3);
  for (Panel& panel : panels) {
    if (!panel.marks || !panel.note) continue;  // time plots; the views place their own
    show_top_time_axis(panel.plot, top);  // untitled: B's legend entries say which clock it is
    if (top) panel.plot->xAxis2->setRange(std::max(0.0, overlay_span.first - pad), overlay_span.second + pad);
  }
}

void MetricsDashboard::Impl::set_x_range(const QCPRange& range, const QCustomPlot* except) {
  syncing = true;
  for (Panel& panel : panels)
    if (panel.plot != except && panel.marks) panel.plot->xAxis->setRange(range);
  syncing = false;
}

void MetricsDashboard::Impl::follow_data() {
  double lo = span.first, hi = span.second;
  if (overlay && !own_clock) lo = std::min(lo, overlay_span.first), hi = std::max(hi, overlay_span.second);
  if (!config_changes.isEmpty()) hi = std::max(hi, config_changes.back().time_s);  // the newest change shows
  if (hi <= lo) hi = std::max({lo + 1.0, uptime});
  const double pad = std::max(0.02 * (hi - lo), 1e-3);
  set_x_range(QCPRange(std::max(0.0, lo - pad), hi + pad), nullptr);
}

void MetricsDashboard::Impl::fit_value_axes() {
  std::set<const QCPAbstractPlottable*> overlay_run;
  for (const Named& n : names)
    if (n.overlay) overlay_run.insert(n.plottable);
  for (Panel& panel : panels) {
    if (!panel.note) continue;  // a view fits its own
    const QCPRange keys = panel.plot->xAxis->range();
    for (QCPAxis* axis : {panel.plot->yAxis, panel.plot->yAxis2}) {
      std::array<double, 2> hi{0, 0};  // the main run's and the overlay's highest value
      for (QCPAbstractPlottable* p : axis->plottables()) {
        bool found = false;
        const QCPRange r = p->getValueRange(found, QCP::sdBoth, p->keyAxis()->range());  // an overlay may have its own clock
        if (found && p->visible()) hi[overlay_run.contains(p)] = std::max(hi[overlay_run.contains(p)], r.upper);
      }
      // Two runs kApartRatio apart (a simulated GPU against this CPU) share a logarithmic axis, on which
      // neither flattens the other; otherwise the axis is linear from 0.
      const bool apart = panel.fraction_cap == 0 && hi[0] > 0 && hi[1] > 0 &&
                         std::max(hi[0], hi[1]) > kApartRatio * std::min(hi[0], hi[1]);
      if (apart != (axis->scaleType() == QCPAxis::stLogarithmic)) {
        if (apart) {
          set_log_axis_unit(axis, unit_of(axis));
        } else {
          axis->setScaleType(QCPAxis::stLinear);
          set_axis_unit(axis, unit_of(axis));
        }
      }
      if (apart) {
        // From below the lowest positive value: a log axis has no 0.
        double lowest = std::numeric_limits<double>::infinity();
        for (QCPAbstractPlottable* p : axis->plottables()) {
          bool found = false;
          const QCPRange r = p->getValueRange(found, QCP::sdPositive, p->keyAxis()->range());
          if (found && p->visible()) lowest = std::min(lowest, r.lower);
        }
        axis->setRange(lowest / 2, std::max(hi[0], hi[1]) * 2);
        continue;
      }
      // Headroom above the data: 15 %, or the band the configuration labels hang in when some show.
      double headroom = 1.15;
      if (panel.config_marks && panel.config_marks->any_in(keys.lower, keys.upper)) {
        const double height = std::max(1, panel.plot->axisRect()->height());
        headroom = std::max(headroom, 1 / std::max(0.3, 1 - panel.config_marks->label_band_pixels() / height));
      }
      double upper = std::max(hi[0], hi[1]) > 0 ? std::max(hi[0], hi[1]) * headroom : 1;
      if (panel.fraction_cap > 0 && axis == panel.plot->yAxis) upper = std::clamp(upper, 0.05, panel.fraction_cap);
      axis->setRange(0, upper);
    }
  }
}

void MetricsDashboard::Impl::refresh() {
  if (following) follow_data();
  fit_value_axes();
  for (Panel& panel : panels) {
    if (!panel.note) {  // a view keeps its own note
      panel.plot->replot(QCustomPlot::rpQueuedReplot);
      continue;
    }
    // A note while the plot has nothing to show.
    bool any = false;
    for (int i = 0; i < panel.plot->plottableCount(); ++i)
      any = any || (panel.plot->plottable(i) != panel.marks && panel.plot->plottable(i)->interface1D()->dataCount() > 0);
    panel.note->setText(!panel.not_reported.isEmpty() ? panel.not_reported
                        : any                          ? QString()
                        : !source_error.isEmpty()      ? source_error
                                                       : panel.idle());
    panel.plot->replot(QCustomPlot::rpQueuedReplot);
  }
}

void MetricsDashboard::Impl::blank_not_reported(const EngineMetricsSnapshot& s) {
  for (Panel& panel : panels)
    if (panel.note) panel.not_reported = not_reported_note(s, panel.plot->objectName().toStdString());
  clear_unreported(s, false);
}

void MetricsDashboard::Impl::clear_unreported(const EngineMetricsSnapshot& s, bool overlay_run) {
  for (const Named& n : names)
    for (const Panel& panel : panels)
      if (n.overlay == overlay_run && n.plottable->parentPlot() == panel.plot &&
          !not_reported_note(s, panel.plot->objectName().toStdString()).isEmpty())
        clear_points(n.plottable);
  // A line of a step metric the source does not report stays empty, whatever its panel shows.
  for (const TableLine& line : table_lines) {
    QCPGraph* run_line = overlay_run ? line.b : line.a;
    if (run_line && line_not_reported(s, line.metric->key)) clear_points(run_line);
  }
}

MetricsDashboard::MetricsDashboard(QWidget* parent) : QWidget(parent), d_(std::make_unique<Impl>()) {
  d_->grid = new QGridLayout(this);
  d_->grid->setContentsMargins(2, 2, 2, 2);
  d_->grid->setSpacing(4);
  Impl& d = *d_;
  d.source_line = new QLabel(this);
  d.source_line->setObjectName(QStringLiteral("source_line"));
  d.source_line->setWordWrap(true);
  d.source_line->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);  // its text's height, no more
  d.source_line->setContentsMargins(4, 0, 4, 0);
  d.source_line->setTextInteractionFlags(Qt::TextSelectableByMouse);
  d.source_line->hide();

  QCustomPlot* p = d.add_panel(this, {"ttft", tr("TTFT"), Unit::Seconds}, true, 0).plot;
  d.ttft = add_graph(p, tr("TTFT"), kTtftColor, Look::Scatter);
  d.name(d.ttft, d.ttft->name(), false);
  d.ttft_b = d.overlay_of(d.ttft);
  // A server's own TTFT percentiles over all its clients (vLLM, SGLang), shown only when there are any.
  d.add_server_latency(p, ServerLatency::Ttft, tr("TTFT"), kTtftColor, p->yAxis);

  // Per request: end-to-end and queue time (left), the median inter-token gap (right, far shorter).
  p = d.add_panel(this, {"latency", tr("e2e, queue"), Unit::Seconds}, true, 0).plot;
  p->yAxis2->setVisible(true);
  p->yAxis2->setLabel(tr("inter-token"));
  set_axis_unit(p->yAxis2, Unit::Seconds);
  d.e2e = add_graph(p, tr("e2e latency"), kE2e, Look::Scatter);
  d.queue = add_graph(p, tr("queue time"), kQueue, Look::Scatter);
  d.itl = add_graph(p, tr("inter-token latency (median)"), kDecodeColor, Look::Scatter, p->yAxis2);
  for (QCPGraph* g : {d.e2e, d.queue, d.itl}) d.name(g, g->name(), false);
  d.e2e_b = d.overlay_of(d.e2e);
  d.add_server_latency(p, ServerLatency::EndToEnd, tr("e2e"), kE2e, p->yAxis);
  d.add_server_latency(p, ServerLatency::Queue, tr("queue time"), kQueue, p->yAxis);
  d.add_server_latency(p, ServerLatency::InterToken, tr("inter-token"), kDecodeColor, p->yAxis2);

  p = d.add_panel(this, {"decode_tokens_per_second", tr("tok/s"), Unit::TokensPerSecond}, true, 0).plot;
  d.rate = add_graph(p, tr("engine decode tok/s"), kDecodeColor, Look::Line);
  d.name(d.rate, d.rate->name(), false);
  d.rate_b = d.overlay_of(d.rate);

  p = d.add_panel(this, {"tokens_per_step", tr("tokens"), Unit::Count}, true, 0).plot;
  // Prompt tokens found in the prefix cache under those computed: the prompt's whole length stacked.
  d.cached = add_bars(p, tr("cached prompt tokens"), kPrefillColor.lighter(160));
  d.prefill = add_bars(p, tr("prefill tokens"), kPrefillColor);
  d.decode = add_bars(p, tr("decode tokens"), kDecodeColor);
  d.prefill->moveAbove(d.cached);
  d.decode->moveAbove(d.prefill);
  p->yAxis2->setVisible(true);
  p->yAxis2->setLabel(tr("step time"));
  set_axis_unit(p->yAxis2, Unit::Seconds);
  for (QCPAbstractPlottable* a : std::initializer_list<QCPAbstractPlottable*>{d.cached, d.prefill, d.decode}) d.name(a, a->name(), false);
  d.add_table_lines(p);
  d.tokens_b = add_graph(p, tr("tokens per step"), QColor(40, 40, 40), Look::Line);
  QPen dashed = d.tokens_b->pen();
  dashed.setStyle(Qt::DashLine);
  d.tokens_b->setPen(dashed);
  d.tokens_b->setVisible(false);
  d.tokens_b->removeFromLegend();
  d.name(d.tokens_b, d.tokens_b->name(), true);

  d.timeline = new RequestTimeline(this);
  d.timeline->set_follow_time(false);  // the shared time axis moves it
  d.add_view(d.timeline, true);
  for (QCPAbstractPlottable* a : std::initializer_list<QCPAbstractPlottable*>{
           d.timeline->waiting, d.timeline->prefill, d.timeline->decode, d.timeline->preemptions,
           d.timeline->first_tokens, d.timeline->finishes})
    d.name(a, a->name(), false);
  d.roofline = new RooflineView(this);
  d.add_view(d.roofline, false);
  for (QCPGraph* g : {d.roofline->prefill, d.roofline->decode}) d.name(g, g->name(), false);
  for (QCPGraph* g : {d.roofline->prefill_b, d.roofline->decode_b}) d.name(g, g->name(), true);

  p = d.add_panel(this, {"kv_usage", tr("of budget"), Unit::Fraction}, true, 1.0).plot;
  d.add_table_lines(p);
  d.usage_marks = d.panels.back().marks;

  p = d.add_panel(this, {"kv_waste", tr("of slots"), Unit::Fraction}, true, 1.02).plot;
  d.add_table_lines(p);

  p = d.add_panel(this, {"prefix_cache_hit_rate", tr("hit rate"), Unit::Fraction}, true, 1.02).plot;
  d.hits = add_graph(p, tr("hit rate (cumulative)"), kHits, Look::Line);
  d.hits->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));  // a lone early point still shows
  d.hits_recent = add_graph(p, tr("hit rate (recent)"), kHitsRecent, Look::Scatter);
  d.name(d.hits, d.hits->name(), false);
  d.name(d.hits_recent, d.hits_recent->name(), false);
  d.hits_b = d.overlay_of(d.hits);
  d.server_hit_rate = add_graph(p, tr("server hit rate (its gauge)"), kHits.darker(140), Look::Line);

  p = d.add_panel(this, {"attention", tr("scratch"), Unit::Bytes}, true, 0).plot;
  p->yAxis2->setVisible(true);
  p->yAxis2->setLabel(tr("time"));
  set_axis_unit(p->yAxis2, Unit::Seconds);
  // the step's scratch, and its matmuls' time beside its attention's: where the rest of a step's time goes
  d.add_table_lines(p);

  QCustomPlot* over_time = d.add_panel(this, {"spec_acceptance", tr("acceptance"), Unit::Fraction}, true, 1.02).plot;
  QCustomPlot* by_position = d.add_panel(this, {"spec_decode", tr("acceptance"), Unit::Fraction}, false, 1.02).plot;
  d.spec = std::make_unique<SpecPlots>(over_time, by_position);
  // The last two panels are speculation's: their notes say whether it is on.
  d.panels[d.panels.size() - 2].idle = d.panels.back().idle = [&d] { return d.spec->empty_note(); };
  for (QCPAbstractPlottable* a : std::initializer_list<QCPAbstractPlottable*>{
           d.spec->per_step, d.spec->window, d.spec->draft_time, d.spec->verify_time, d.spec->chosen_k,
           d.spec->positions})
    d.name(a, a->name(), false);
  d.name(d.spec->positions_b, d.spec->positions_b->name(), true);
  d.spec_window_b = d.overlay_of(d.spec->window);
  d.server_acceptance = add_graph(over_time, tr("server acceptance rate (its gauge)"), QColor(44, 160, 44), Look::Line);
  // SGLang's mean accepted length (tokens per verify step) on an axis of its own, shown with its data.
  QCPAxis* length_axis = over_time->axisRect()->addAxis(QCPAxis::atRight);
  length_axis->setLabel(tr("tokens per verify"));
  length_axis->setVisible(false);
  d.server_accept_length = add_graph(over_time, tr("server accepted length (its gauge)"), QColor(23, 120, 23), Look::Line, length_axis);
  for (QCPGraph* g : d.server_graphs()) {
    d.name(g, g->name(), false);
    g->removeFromLegend();
  }

  for (Impl::Panel& panel : d.panels) {
    if (panel.plot->legend->itemCount() == 0 && !panel.marks) {  // nothing to name: no legend row
      panel.plot->plotLayout()->take(panel.plot->legend);
      panel.plot->plotLayout()->simplify();
      panel.plot->legend->setVisible(false);
    }
    if (!panel.marks) continue;
    QCustomPlot* plot = panel.plot;
    // One time axis: the user's drag or zoom on any plot moves them all and stops following the data.
    connect(plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this, plot](const QCPRange& r) {
      if (d_->syncing) return;
      d_->following = false;
      d_->set_x_range(r, plot);
      d_->fit_value_axes();
      for (Impl::Panel& s : d_->panels) s.plot->replot(QCustomPlot::rpQueuedReplot);
    });
    // A double click goes back to following the data; the tooltip says how the chart moves.
    plot->setToolTip(plot->toolTip() + tr("<p><i>Drag to pan the time axis, Ctrl+wheel to zoom, double-click to "
                                          "follow the data again.</i></p>"));
    connect(plot, &QCustomPlot::mouseDoubleClick, this, [this] {
      d_->following = true;
      d_->refresh();
    });
  }
  for (Impl::Panel& panel : d.panels) {
    add_export_menu(*panel.plot, [this](const QString& dir) { return export_all(dir); });
  }
  d.lay_out(4);
  d.refresh();
}

MetricsDashboard::~MetricsDashboard() = default;

void MetricsDashboard::update_from(const EngineMetricsSnapshot& s) {
  check_not_reported(s);
  Impl& d = *d_;
  d.uptime = s.uptime_s;
  const double now = s.steps.empty() ? s.uptime_s : s.steps.back().time_s;
  const bool new_marks = d.preemptions.add(now, s.num_preemptions);
  d.prefix.add(now, s.kv.prefix_cache_queries, s.kv.prefix_cache_hits);
  const Signature sig = signature_of(s);
  if (d.last == sig && !new_marks) return;  // nothing drawn changed
  d.last = sig;
  d.source_error = QString::fromStdString(s.source_error);
  d.show_source(s);

  d.span = time_span(s);
  set_series(d.ttft, ttft_series(s));
  std::vector<std::pair<QCPGraph*, std::function<double(const StepMetrics&)>>> reported = {
      {d.server_hit_rate, [](const StepMetrics& m) { return m.server_prefix_hit_rate; }},
      {d.server_acceptance, [](const StepMetrics& m) { return m.server_spec_accept_rate; }},
      {d.server_accept_length, [](const StepMetrics& m) { return m.server_spec_accept_length; }}};
  for (size_t i = 0; i < kServerLatencies; ++i) {
    reported.emplace_back(d.server_latency[i][0], [i](const StepMetrics& m) { return m.server_latency[i].p50_s; });
    reported.emplace_back(d.server_latency[i][1], [i](const StepMetrics& m) { return m.server_latency[i].p99_s; });
  }
  for (const auto& [graph, value] : reported) {
    const Series server = reported_step_series(s, value);
    set_series(graph, server);
    if (server.x.isEmpty()) graph->removeFromLegend();
    else graph->addToLegend();
  }
  if (QCPAxis* length_axis = d.server_accept_length->valueAxis(); d.server_accept_length->data()->isEmpty()) {
    length_axis->setVisible(false);
  } else {  // fit_value_axes knows the two standard axes only
    length_axis->setVisible(true);
    d.server_accept_length->rescaleValueAxis();
    length_axis->setRange(0, length_axis->range().upper * 1.15);
  }
  set_series(d.e2e, e2e_series(s));
  set_series(d.queue, queue_time_series(s));
  set_series(d.itl, median_itl_series(s));
  set_series(d.rate, decode_rate_series(s));
  d.name_rate(s.throughput_basis.empty() ? tr("engine decode tok/s")
                                         : tr("server decode tok/s (%1)").arg(QString::fromStdString(s.throughput_basis)));
  const Series prefill = step_bars(s, [](const StepMetrics& m) { return double(m.prefill_tokens); });
  d.prefill->setData(prefill.x, prefill.y, true);
  const Series cached = step_bars(s, [](const StepMetrics& m) { return double(m.prefix_cache_hits); });
  d.cached->setData(cached.x, cached.y, true);
  const Series decode = step_bars(s, [](const StepMetrics& m) { return double(m.decode_tokens); });
  d.decode->setData(decode.x, decode.y, true);
  for (QCPBars* bars : {d.cached, d.prefill, d.decode}) bars->setWidth(median_step_seconds(s));
  for (const Impl::TableLine& line : d.table_lines) set_series(line.a, step_series(s, line.metric->value));
  set_series(d.hits, d.prefix.cumulative());
  set_series(d.hits_recent, d.prefix.interval());
  d.spec->update_from(s);
  d.timeline->update_from(s);
  d.roofline->update_from(s);
  QVector<double> counts;
  for (int64_t c : d.preemptions.counts()) counts.push_back(double(c));
  for (Impl::Panel& panel : d.panels)
    if (panel.marks) panel.marks->setData(d.preemptions.times(), counts, true);
  // The KV usage plot names the red dashed lines once there are any.
  if (counts.isEmpty()) d.usage_marks->removeFromLegend();
  else d.usage_marks->addToLegend();
  d.blank_not_reported(s);
  d.refresh();
}

void MetricsDashboard::clear() {
  Impl& d = *d_;
  d.source_line->hide();
  d.prefix.clear();
  d.preemptions.clear();
  d.last.reset();
  d.span = {0, 0};
  d.uptime = 0;
  d.source_error.clear();
  d.following = true;
  for (QCPGraph* g : {d.ttft, d.e2e, d.queue, d.itl, d.rate, d.hits, d.hits_recent}) g->data()->clear();
  for (const Impl::TableLine& line : d.table_lines) line.a->data()->clear();
  for (QCPGraph* g : d.server_graphs()) g->data()->clear();
  for (QCPBars* bars : {d.cached, d.prefill, d.decode}) bars->data()->clear();
  d.spec->clear();
  d.timeline->clear();
  d.roofline->clear();
  for (Impl::Panel& panel : d.panels) {
    if (panel.marks) panel.marks->data()->clear();
    panel.not_reported.clear();
  }
  d.config_changes.clear();
  d.show_config_changes();
  d.refresh();
}

void MetricsDashboard::set_roofs(const inferscope::gui::MachineRoofs& roofs) { d_->roofline->set_roofs(roofs); }

void MetricsDashboard::mark_config_change(double time_s, const QString& label) {
  Impl& d = *d_;
  d.config_changes.push_back({time_s, label});
  if (d.config_changes.size() > kMaxConfigMarks) d.config_changes.removeFirst();
  d.show_config_changes();
  d.refresh();
}

RooflineView* MetricsDashboard::roofline() const { return d_->roofline; }

RequestTimeline* MetricsDashboard::timeline() const { return d_->timeline; }

void MetricsDashboard::set_overlay(const EngineMetricsSnapshot* other, const QString& label_a, const QString& label_b,
                                   bool own_clock) {
  Impl& d = *d_;
  d.overlay = other ? std::optional<EngineMetricsSnapshot>(*other) : std::nullopt;
  d.label_a = label_a;
  d.own_clock = own_clock;
  d.label_b = label_b;
  d.draw_overlay();
  d.apply_names();  // after: a series moved to the top axis says so
  // Names with run labels are longer: each legend fits its lines to its width again.
  for (Impl::Panel& panel : d.panels) refit_legend(panel.plot);
  d.refresh();
}

QList<QCustomPlot*> MetricsDashboard::plots() const {
  QList<QCustomPlot*> out;
  for (const Impl::Panel& panel : d_->panels) out.push_back(panel.plot);
  return out;
}

QCustomPlot* MetricsDashboard::plot(const QString& name) const {
  for (const Impl::Panel& panel : d_->panels)
    if (panel.plot->objectName() == name) return panel.plot;
  return nullptr;
}

QStringList MetricsDashboard::export_all(const QString& dir) const {
  if (!QDir().mkpath(dir)) throw std::runtime_error((dir + QStringLiteral(": cannot create the folder")).toStdString());
  QStringList files;
  for (const Impl::Panel& panel : d_->panels) files += export_plot(*panel.plot, dir);
  return files;
}

void MetricsDashboard::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  d_->lay_out(std::clamp(width() / kPlotMinWidth, 1, 4));
}
