// The request timeline: a Gantt-style lane per request (request_lanes.h) on the time axis (seconds
// since the engine started): grey while it waits, orange prefill, green decode; red crosses at its
// preemptions, a blue diamond at its first token (arrival + TTFT), a black square when it finished.
// The newest kMaxLanes requests get a lane. Data only: it draws the snapshots it is given. Hover
// names the request and the bar or mark under the mouse. For a comparison a second run is drawn on
// the same time axis, each request's B lane right under its A lane (paler bars, labelled "A 3",
// "B 3"), and the plot asks for the height that keeps every lane readable; a run on another clock (a
// simulated one's virtual time) is drawn against a time axis of its own along the top. On a remote server the lanes are this
// client's requests only (a server lists no one's timings), and a corner label says so.
#pragma once
#include <qcustomplot.h>
#include <vector>

#include "core/engine/engine_metrics.h"
#include "gui/dashboard/request_lanes.h"
#include "gui/plot/plot_export.h"

namespace inferscope::gui {

class RequestTimeline : public QCustomPlot, public OwnCsv {
  Q_OBJECT
 public:
  static constexpr int kMaxLanes = 48;

  explicit RequestTimeline(QWidget* parent = nullptr);
  // Redraws every lane from one snapshot (none when its not_reported lists "request_timeline").
  void update_from(const EngineMetricsSnapshot& s);
  void clear();
  // A second run's lanes under the first's, labelled `label_a` and `label_b` ("A", "B"); null: none.
  // own_clock: its times go on the top axis, fitted to them (MetricsDashboard::set_overlay).
  void set_overlay(const EngineMetricsSnapshot* other, const QString& label_a, const QString& label_b,
                   bool own_clock = false);
  // Whether update_from() moves the time axis to the data (default true). A host that drives the
  // time axis itself (the dashboard's shared one) turns it off.
  void set_follow_time(bool follow) { follow_time_ = follow; }
  // The main run's lanes, in arrival order.
  const std::vector<RequestLane>& lanes() const { return lanes_; }
  // Every row drawn, top to bottom (row i at y = i): the run (0 main, 1 overlay) and its lane.
  struct Row {
    int run = 0;
    const RequestLane* lane = nullptr;
  };
  const std::vector<Row>& rows() const { return rows_; }
  // The centred note: the snapshot's source saying it does not report per-request timings, "waiting
  // for the first request" or "".
  QString note() const;
  // The corner label: on a remote server, that only this client's requests have lanes; else "".
  QString scope() const { return scope_->text(); }
  // What the mouse at `pos` points at: a lane's bar or mark, or "".
  QString hover_at(QPointF pos) const;
  // "run,request,kind,start_s,end_s,tokens,steps": every bar of every row drawn (waiting, prefill,
  // decode), then its marks (preempted, first token, finished) with start_s = end_s; times in seconds
  // since the engine started; run is the row's tag ("A", "B") beside an overlay, else empty.
  QByteArray csv() const override;

  // One bar plottable per kind (its key axis is the vertical lane axis, its values are times), and
  // the marks (key: time, value: lane).
  QCPFinancial *waiting, *prefill, *decode;
  QCPFinancial *waiting_b, *prefill_b, *decode_b;  // the overlay run's bars, paler
  QCPGraph *preemptions, *first_tokens, *finishes;
  QCPGraph *preemptions_b, *first_tokens_b, *finishes_b;  // the overlay run's marks

 private:
  QCPFinancial* bars_of(LaneKind kind, int run) const;
  // The axis a row's times are drawn against: the bottom one, or the top for an own-clock overlay.
  const QCPAxis* time_axis_of(int run) const { return run == 1 && own_clock_ ? xAxis2 : xAxis; }
  void show_lanes();

  std::vector<RequestLane> lanes_, overlay_lanes_;
  bool overlay_ = false;
  bool own_clock_ = false;
  QString label_a_, label_b_;
  std::vector<Row> rows_;
  bool follow_time_ = true;
  QString not_reported_;  // the last snapshot's "does not report" note, "" when it reports requests
  QCPItemText* note_;
  QCPItemText* scope_;
};

}  // namespace inferscope::gui
