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

}  // namespace

RequestTimeline::RequestTimeline(QWidget* parent) : QCustomPlot(parent) {
  note_ = setup_plot(this, {"request_timeline", QStringLiteral("request"), Unit::Count});
  yAxis->setRangeReversed(true);  // the oldest request on top
  yAxis->grid()->setVisible(false);
  waiting = add_lane_bars(this, QStringLiteral("waiting"), kWaitingColor);
  prefill = add_lane_bars(this, QStringLiteral("prefill"), kPrefillColor);
  decode = add_lane_bars(this, QStringLiteral("decode"), kDecodeColor);
  preemptions = add_marks(this, QStringLiteral("preempted"), kPreemptionColor, QCPScatterStyle::ssCross, 9);
  first_tokens = add_marks(this, QStringLiteral("first token"), kTtftColor, QCPScatterStyle::ssDiamond, 8);
  finishes = add_marks(this, QStringLiteral("finished"), QColor(30, 30, 30), QCPScatterStyle::ssSquare, 5);
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
  lanes_ = not_reported_.isEmpty() ? request_lanes(s) : std::vector<RequestLane>{};
  if (lanes_.size() > kMaxLanes) lanes_.erase(lanes_.begin(), lanes_.end() - kMaxLanes);
  show_lanes();
}

void RequestTimeline::clear() {
  not_reported_.clear();
  scope_->setText(QString());
  lanes_.clear();
  show_lanes();
}

QCPFinancial* RequestTimeline::bars_of(LaneKind kind) const {
  switch (kind) {
    case LaneKind::Waiting:
      return waiting;
    case LaneKind::Prefill:
      return prefill;
    case LaneKind::Decode:
      return decode;
  }
  return nullptr;
}

void RequestTimeline::show_lanes() {
  struct Bars {
    QVector<double> lane, start, end;
  };
  std::map<QCPFinancial*, Bars> bars;
  std::map<QCPGraph*, std::pair<QVector<double>, QVector<double>>> marks;  // time, lane
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  const size_t labels = static_cast<size_t>(std::max(2, axisRect()->height() / kLabelPixels));
  const size_t label_every = (lanes_.size() + labels - 1) / labels;
  for (size_t i = 0; i < lanes_.size(); ++i) {
    const RequestLane& lane = lanes_[i];
    const double y = static_cast<double>(i);
    if (i % label_every == 0) ticker->addTick(y, QStringLiteral("req %1").arg(lane.id));
    for (const LaneSegment& bar : lane.segments) {
      Bars& b = bars[bars_of(bar.kind)];
      b.lane.push_back(y);
      b.start.push_back(bar.start_s);
      b.end.push_back(bar.end_s);
      lo = std::min(lo, bar.start_s), hi = std::max(hi, bar.end_s);
    }
    auto mark = [&](QCPGraph* g, double t) {
      marks[g].first.push_back(t);
      marks[g].second.push_back(y);
    };
    for (double t : lane.preemptions_s) mark(preemptions, t);
    if (lane.first_token_s >= 0) mark(first_tokens, lane.first_token_s);
    if (lane.finish_s >= 0) mark(finishes, lane.finish_s);
  }
  for (QCPFinancial* f : {waiting, prefill, decode}) {
    const Bars& b = bars[f];
    // Lanes come in order, so keys are sorted; the body runs open -> close, the wick low -> high.
    f->setData(b.lane, b.start, b.end, b.start, b.end, true);
  }
  for (QCPGraph* g : {preemptions, first_tokens, finishes}) g->setData(marks[g].first, marks[g].second);
  yAxis->setTicker(ticker);
  // Half a lane more above the first: room for the charts' configuration labels.
  yAxis->setRange(-1.1, std::max<double>(static_cast<double>(lanes_.size()), 4) - 0.4);
  if (follow_time_ && hi > lo) {
    const double pad = 0.02 * (hi - lo);
    xAxis->setRange(std::max(0.0, lo - pad), hi + pad);
  }
  note_->setText(note());
  replot(rpQueuedReplot);
}

QString RequestTimeline::note() const {
  if (!not_reported_.isEmpty()) return not_reported_;
  return lanes_.empty() ? QStringLiteral("waiting for the first request") : QString();
}

QString RequestTimeline::hover_at(QPointF pos) const {
  const double row = yAxis->pixelToCoord(pos.y());
  const long i = std::lround(row);
  if (i < 0 || i >= static_cast<long>(lanes_.size()) || std::fabs(row - static_cast<double>(i)) > kBarHeight / 2) return {};
  const RequestLane& lane = lanes_[static_cast<size_t>(i)];
  const double t = xAxis->pixelToCoord(pos.x());
  const double near = std::fabs(xAxis->pixelToCoord(pos.x() + kHoverRadiusPx) - t);  // the hover radius in seconds
  QStringList lines{QStringLiteral("request %1 · prompt %2 tokens · %3 generated")
                        .arg(lane.id)
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
