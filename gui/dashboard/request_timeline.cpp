#include "gui/dashboard/request_timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "gui/dashboard/not_reported.h"
#include "gui/dashboard/series_colors.h"
#include "gui/plot/plot_hover.h"
#include "gui/plot/plot_setup.h"

namespace inferscope::gui {

namespace {

constexpr double kBarHeight = 0.62;  // of a lane
constexpr int kLabelPixels = 14;     // the height of a lane label: more lanes than fit label every n-th
constexpr int kRowPixels = 9;        // the least height a compared row keeps
constexpr int kChromePixels = 110;   // title, legend and time axis around the lanes
constexpr int kMinHeight = 170;

// Horizontal bars: a candlestick whose key axis is the vertical lane axis and whose body runs from
// open (the bar's start) to close (its end).
QCPFinancial* add_lane_bars(QCustomPlot* plot, const QString& name, QColor color) {
  auto* bars = new QCPFinancial(plot->yAxis, plot->xAxis);
  bars->setName(name);
  bars->setChartStyle(QCPFinancial::csCandlestick);
  bars->setTwoColored(false);
  bars->setBrush(color);
  bars->setPen(QPen(color.darker(125), 1));
  bars->setWidthType(QCPFinancial::wtPlotCoords);
  bars->setWidth(kBarHeight);
  return bars;
}

// The overlay run's bars: the same colours, paler, with a dashed edge; the tick labels say which run.
QCPFinancial* add_overlay_bars(QCustomPlot* plot, QColor color) {
  QColor pale = color;
  pale.setAlpha(110);
  QCPFinancial* bars = add_lane_bars(plot, QString(), pale);
  bars->setPen(QPen(color.darker(125), 1, Qt::DashLine));
  bars->removeFromLegend();
  return bars;
}

QCPGraph* add_marks(QCustomPlot* plot, const QString& name, QColor color, QCPScatterStyle::ScatterShape shape, double size) {
  QCPGraph* g = add_graph(plot, name, color, Look::Scatter);
  g->setScatterStyle(QCPScatterStyle(shape, QPen(color, 2), shape == QCPScatterStyle::ssCross ? QBrush() : QBrush(color), size));
  return g;
}

QString seconds(double s) { return format_value(s, Unit::Seconds); }

QString span_text(double from, double to) {
  return QStringLiteral("%1 s → %2 s (%3)").arg(from, 0, 'f', 3).arg(to, 0, 'f', 3).arg(seconds(to - from));
}

QString segment_text(const LaneSegment& bar) {
  QString text = QLatin1String(lane_kind_name(bar.kind)) + QStringLiteral(": ");
  const QString steps = bar.steps == 1 ? QStringLiteral("1 step") : QStringLiteral("%1 steps").arg(bar.steps);
  if (bar.kind == LaneKind::Prefill) text += QStringLiteral("%1 prompt tokens in %2, ").arg(bar.tokens).arg(steps);
  if (bar.kind == LaneKind::Decode) text += QStringLiteral("%1 tokens in %2, ").arg(bar.tokens).arg(steps);
  return text + span_text(bar.start_s, bar.end_s);
}

// The newest kMaxLanes lanes of `s`; none when it does not report per-request timings.
std::vector<RequestLane> newest_lanes(const EngineMetricsSnapshot& s) {
  if (!not_reported_note(s, "request_timeline").isEmpty()) return {};
  std::vector<RequestLane> lanes = request_lanes(s);
  if (lanes.size() > RequestTimeline::kMaxLanes) lanes.erase(lanes.begin(), lanes.end() - RequestTimeline::kMaxLanes);
  return lanes;
}

}  // namespace

RequestTimeline::RequestTimeline(QWidget* parent) : QCustomPlot(parent) {
  note_ = setup_plot(this, {"request_timeline", QStringLiteral("request"), Unit::Count});
  yAxis->setRangeReversed(true);  // the oldest request on top
  yAxis->grid()->setVisible(false);
  waiting = add_lane_bars(this, QStringLiteral("waiting"), kWaitingColor);
  prefill = add_lane_bars(this, QStringLiteral("prefill"), kPrefillColor);
  decode = add_lane_bars(this, QStringLiteral("decode"), kDecodeColor);
  waiting_b = add_overlay_bars(this, kWaitingColor);
  prefill_b = add_overlay_bars(this, kPrefillColor);
  decode_b = add_overlay_bars(this, kDecodeColor);
  preemptions = add_marks(this, QStringLiteral("preempted"), kPreemptionColor, QCPScatterStyle::ssCross, 9);
  first_tokens = add_marks(this, QStringLiteral("first token"), kTtftColor, QCPScatterStyle::ssDiamond, 8);
  finishes = add_marks(this, QStringLiteral("finished"), QColor(30, 30, 30), QCPScatterStyle::ssSquare, 5);
  preemptions_b = add_marks(this, QString(), kPreemptionColor, QCPScatterStyle::ssCross, 9);
  first_tokens_b = add_marks(this, QString(), kTtftColor, QCPScatterStyle::ssDiamond, 8);
  finishes_b = add_marks(this, QString(), QColor(30, 30, 30), QCPScatterStyle::ssSquare, 5);
  for (QCPGraph* g : {preemptions_b, first_tokens_b, finishes_b}) g->removeFromLegend();
  install_hover(this, [this](QPointF pos) { return hover_at(pos); });
  scope_ = new QCPItemText(this);
  scope_->setObjectName(QStringLiteral("scope"));
  scope_->position->setType(QCPItemPosition::ptAxisRectRatio);
  scope_->position->setCoords(0.01, 0.01);
  scope_->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
  scope_->setColor(QColor(110, 110, 110));
  scope_->setFont(QFont(font().family(), 8, -1, true));
  scope_->setText(QString());
  show_lanes();
}

void RequestTimeline::update_from(const EngineMetricsSnapshot& s) {
  not_reported_ = not_reported_note(s, "request_timeline");
  scope_->setText(s.source.empty() ? QString()
                                   : QStringLiteral("this client's requests only: %1 lists no one's timings")
                                         .arg(QString::fromStdString(s.source)));
  lanes_ = newest_lanes(s);
  show_lanes();
}

void RequestTimeline::clear() {
  not_reported_.clear();
  scope_->setText(QString());
  lanes_.clear();
  show_lanes();
}

void RequestTimeline::set_overlay(const EngineMetricsSnapshot* other, const QString& label_a, const QString& label_b,
                                  bool own_clock) {
  overlay_ = other != nullptr;
  own_clock_ = overlay_ && own_clock;
  for (QCPFinancial* f : {waiting_b, prefill_b, decode_b}) f->setValueAxis(own_clock_ ? xAxis2 : xAxis);
  for (QCPGraph* g : {preemptions_b, first_tokens_b, finishes_b}) g->setKeyAxis(own_clock_ ? xAxis2 : xAxis);
  show_top_time_axis(this, own_clock_, label_b + QStringLiteral(": its own clock"));
  label_a_ = label_a;
  label_b_ = label_b;
  overlay_lanes_ = other ? newest_lanes(*other) : std::vector<RequestLane>{};
  show_lanes();
}

QCPFinancial* RequestTimeline::bars_of(LaneKind kind, int run) const {
  switch (kind) {
    case LaneKind::Waiting:
      return run == 0 ? waiting : waiting_b;
    case LaneKind::Prefill:
      return run == 0 ? prefill : prefill_b;
    case LaneKind::Decode:
      return run == 0 ? decode : decode_b;
  }
  return nullptr;
}

void RequestTimeline::show_lanes() {
  struct Bars {
    QVector<double> lane, start, end;
  };
  // Each request's overlay lane right under its main one; the overlay's other requests after them.
  rows_.clear();
  std::map<RequestId, const RequestLane*> overlay_by_id;
  for (const RequestLane& lane : overlay_lanes_) overlay_by_id[lane.id] = &lane;
  for (const RequestLane& lane : lanes_) {
    rows_.push_back({0, &lane});
    if (const auto it = overlay_by_id.find(lane.id); it != overlay_by_id.end()) {
      rows_.push_back({1, it->second});
      overlay_by_id.erase(it);
    }
  }
  for (const RequestLane& lane : overlay_lanes_)
    if (overlay_by_id.contains(lane.id)) rows_.push_back({1, &lane});
  // Compared runs keep every row readable: the plot asks for the height, its scroll area gives it.
  const int wanted = overlay_ ? kChromePixels + kRowPixels * static_cast<int>(rows_.size()) : kMinHeight;
  setMinimumHeight(std::max(kMinHeight, wanted));

  std::map<QCPFinancial*, Bars> bars;
  std::map<QCPGraph*, std::pair<QVector<double>, QVector<double>>> marks;  // time, lane
  // Each clock's span: [0] the bottom axis's, [1] the top one's.
  double lo[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()}, hi[2] = {0, 0};
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  const size_t labels = static_cast<size_t>(std::max(2, axisRect()->height() / kLabelPixels));
  const size_t label_every = (rows_.size() + labels - 1) / labels;
  for (size_t i = 0; i < rows_.size(); ++i) {
    const RequestLane& lane = *rows_[i].lane;
    const int run = rows_[i].run;
    const double y = static_cast<double>(i);
    // A served request's lane is tagged with its client's product ("curl/8.5.0 12"), the workbench's own "req 12".
    const QString tag = overlay_                ? (run == 0 ? label_a_ : label_b_)
                        : !lane.client.empty() ? QString::fromStdString(lane.client).section(QStringLiteral(" at "), 0, 0)
                                               : QStringLiteral("req");
    const int clock = run == 1 && own_clock_ ? 1 : 0;
    if (i % label_every == 0) ticker->addTick(y, QStringLiteral("%1 %2").arg(tag).arg(lane.id));
    for (const LaneSegment& bar : lane.segments) {
      Bars& b = bars[bars_of(bar.kind, run)];
      b.lane.push_back(y);
      b.start.push_back(bar.start_s);
      b.end.push_back(bar.end_s);
      lo[clock] = std::min(lo[clock], bar.start_s), hi[clock] = std::max(hi[clock], bar.end_s);
    }
    auto mark = [&](QCPGraph* g, double t) {
      marks[g].first.push_back(t);
      marks[g].second.push_back(y);
    };
    for (double t : lane.preemptions_s) mark(run == 1 ? preemptions_b : preemptions, t);
    if (lane.first_token_s >= 0) mark(run == 1 ? first_tokens_b : first_tokens, lane.first_token_s);
    if (lane.finish_s >= 0) mark(run == 1 ? finishes_b : finishes, lane.finish_s);
  }
  for (QCPFinancial* f : {waiting, prefill, decode, waiting_b, prefill_b, decode_b}) {
    const Bars& b = bars[f];
    // Lanes come in order, so keys are sorted; the body runs open -> close, the wick low -> high.
    f->setData(b.lane, b.start, b.end, b.start, b.end, true);
  }
  for (QCPGraph* g : {preemptions, first_tokens, finishes, preemptions_b, first_tokens_b, finishes_b})
    g->setData(marks[g].first, marks[g].second);
  yAxis->setTicker(ticker);
  // Half a lane more above the first: room for the charts' configuration labels.
  yAxis->setRange(-1.1, std::max<double>(static_cast<double>(rows_.size()), 4) - 0.4);
  const auto fit = [&](QCPAxis* axis, int clock) {
    const double pad = 0.02 * (hi[clock] - lo[clock]);
    axis->setRange(std::max(0.0, lo[clock] - pad), hi[clock] + pad);
  };
  if (follow_time_ && hi[0] > lo[0]) fit(xAxis, 0);
  if (own_clock_ && hi[1] > lo[1]) fit(xAxis2, 1);
  note_->setText(note());
  replot(rpQueuedReplot);
}

QByteArray RequestTimeline::csv() const {
  QByteArray out = "run,request,kind,start_s,end_s,tokens,steps\n";
  const auto number = [](double v) { return QByteArray::number(v, 'g', 10); };
  for (const Row& row : rows_) {
    const QByteArray head = (!overlay_ ? QByteArray() : (row.run == 0 ? label_a_ : label_b_).toUtf8()) + ',' +
                            QByteArray::number(row.lane->id) + ',';
    for (const LaneSegment& bar : row.lane->segments) {
      out += head + lane_kind_name(bar.kind) + ',' + number(bar.start_s) + ',' + number(bar.end_s) + ',' +
             QByteArray::number(bar.tokens) + ',' + QByteArray::number(bar.steps) + '\n';
    }
    const auto mark = [&](const char* kind, double t) { out += head + kind + ',' + number(t) + ',' + number(t) + ",,\n"; };
    for (double t : row.lane->preemptions_s) mark("preempted", t);
    if (row.lane->first_token_s >= 0) mark("first token", row.lane->first_token_s);
    if (row.lane->finish_s >= 0) mark("finished", row.lane->finish_s);
  }
  return out;
}

QString RequestTimeline::note() const {
  if (!not_reported_.isEmpty()) return not_reported_;
  return lanes_.empty() ? QStringLiteral("waiting for the first request") : QString();
}

QString RequestTimeline::hover_at(QPointF pos) const {
  const double row = yAxis->pixelToCoord(pos.y());
  const long i = std::lround(row);
  if (i < 0 || i >= static_cast<long>(rows_.size()) || std::fabs(row - static_cast<double>(i)) > kBarHeight / 2) return {};
  const RequestLane& lane = *rows_[static_cast<size_t>(i)].lane;
  const QString run = !overlay_ ? QString() : (rows_[static_cast<size_t>(i)].run == 0 ? label_a_ : label_b_) + QStringLiteral(" · ");
  const QCPAxis* time = time_axis_of(rows_[static_cast<size_t>(i)].run);
  const double t = time->pixelToCoord(pos.x());
  const double near = std::fabs(time->pixelToCoord(pos.x() + kHoverRadiusPx) - t);  // the hover radius in seconds
  const QString from = lane.client.empty() ? QString() : QStringLiteral(" from ") + QString::fromStdString(lane.client);
  QStringList lines{QStringLiteral("%1request %2%3 · prompt %4 tokens · %5 generated")
                        .arg(run)
                        .arg(lane.id)
                        .arg(from)
                        .arg(lane.prompt_tokens)
                        .arg(lane.generation_tokens)};
  for (double p : lane.preemptions_s)
    if (std::fabs(p - t) <= near)
      lines << QStringLiteral("preempted at %1 s: its KV memory freed, it waits, then recomputes its prompt and output").arg(p, 0, 'f', 3);
  if (lane.first_token_s >= 0 && std::fabs(lane.first_token_s - t) <= near)
    lines << QStringLiteral("first token at %1 s: TTFT %2").arg(lane.first_token_s, 0, 'f', 3).arg(seconds(lane.first_token_s - lane.arrival_s));
  if (lane.finish_s >= 0 && std::fabs(lane.finish_s - t) <= near)
    lines << QStringLiteral("finished at %1 s (%2): e2e latency %3")
                 .arg(lane.finish_s, 0, 'f', 3)
                 .arg(QString::fromStdString(lane.finish_reason))
                 .arg(seconds(lane.finish_s - lane.arrival_s));
  for (const LaneSegment& bar : lane.segments)
    if (t >= bar.start_s - near && t <= bar.end_s + near) lines << segment_text(bar);
  return lines.size() > 1 ? lines.join(QLatin1Char('\n')) : QString();
}

}  // namespace inferscope::gui
