// The request timeline: a Gantt-style lane per request (request_lanes.h) on the time axis (seconds
// since the engine started): grey while it waits, orange prefill, green decode; red crosses at its
// preemptions, a blue diamond at its first token (arrival + TTFT), a black square when it finished.
// The newest kMaxLanes requests get a lane. Data only: it draws the snapshots it is given. Hover
// names the request and the bar or mark under the mouse. On a remote server the lanes are this
// client's requests only (a server lists no one's timings), and a corner label says so.
#pragma once
#include <qcustomplot.h>
#include <vector>

#include "core/engine/engine_metrics.h"
#include "gui/dashboard/request_lanes.h"

namespace inferscope::gui {

class RequestTimeline : public QCustomPlot {
  Q_OBJECT
 public:
  static constexpr int kMaxLanes = 48;

  explicit RequestTimeline(QWidget* parent = nullptr);
  // Redraws every lane from one snapshot (none when its not_reported lists "request_timeline").
  void update_from(const EngineMetricsSnapshot& s);
  void clear();
  // Whether update_from() moves the time axis to the data (default true). A host that drives the
  // time axis itself (the dashboard's shared one) turns it off.
  void set_follow_time(bool follow) { follow_time_ = follow; }
  // The lanes drawn, top to bottom (lane i is at y = i).
  const std::vector<RequestLane>& lanes() const { return lanes_; }
  // The centred note: the snapshot's source saying it does not report per-request timings, "waiting
  // for the first request" or "".
  QString note() const;
  // The corner label: on a remote server, that only this client's requests have lanes; else "".
  QString scope() const { return scope_->text(); }
  // What the mouse at `pos` points at: a lane's bar or mark, or "".
  QString hover_at(QPointF pos) const;

  // One bar plottable per kind (its key axis is the vertical lane axis, its values are times), and
  // the marks (key: time, value: lane).
  QCPFinancial *waiting, *prefill, *decode;
  QCPGraph *preemptions, *first_tokens, *finishes;

 private:
  QCPFinancial* bars_of(LaneKind kind) const;
  void show_lanes();

  std::vector<RequestLane> lanes_;
  bool follow_time_ = true;
  QString not_reported_;  // the last snapshot's "does not report" note, "" when it reports requests
  QCPItemText* note_;
  QCPItemText* scope_;
};

}  // namespace inferscope::gui
