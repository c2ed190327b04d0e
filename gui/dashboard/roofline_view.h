// The roofline (log-log): every engine step a dot at its arithmetic intensity (FLOPs per byte of
// weights + K/V read) and achieved FLOP/s, prefill steps orange and decode-only steps green, under
// the machine's measured roofs: memory (bandwidth x intensity) and compute (the peak), which meet at
// the labelled ridge point. Data only: it draws what it is given (roofline_series.h), and says
// "measuring the machine…" until set_roofs(). Hover shows a step's numbers.
#pragma once
#include <qcustomplot.h>
#include <vector>

#include "core/engine/engine_metrics.h"
#include "gui/dashboard/roofline_series.h"

namespace inferscope::gui {

class RooflineView : public QCustomPlot {
  Q_OBJECT
 public:
  explicit RooflineView(QWidget* parent = nullptr);
  // The machine's roofs (measured once per process by the EngineBridge).
  void set_roofs(const MachineRoofs& roofs);
  const MachineRoofs& roofs() const { return roofs_; }
  // One dot per step of `s` that counted its cost (redrawn from the whole snapshot).
  void update_from(const EngineMetricsSnapshot& s);
  // A second run's steps as hollow dots (the comparison), or none.
  void set_overlay(const EngineMetricsSnapshot* other);
  // Forgets the steps; the roofs stay (they are the machine's).
  void clear();
  // The centred note: the snapshot's source saying it does not report FLOPs or bytes (when its
  // not_reported lists "roofline": no dots then), "measuring the machine…", "waiting for the first
  // engine step" or "".
  QString note() const;
  // What the mouse at `pos` points at: a step's numbers, or "" away from every dot.
  QString hover_at(QPointF pos);

  // Named by the dashboard for the legend and the CSV; keys are intensities, values FLOP/s.
  QCPGraph *prefill, *decode, *prefill_b, *decode_b;
  QCPGraph *memory_roof, *compute_roof;  // compute_roof's first point is the ridge
  QCPItemText* ridge_label;

 private:
  struct Dots {
    QCPGraph* graph;
    std::vector<StepMetrics> steps;  // the step behind each point, in the graph's (intensity) order
  };
  void show_steps(const EngineMetricsSnapshot* s, QCPGraph* prefill_graph, QCPGraph* decode_graph);
  void fit_axes();
  void show_note();
  const Dots* dots_of(const QCPAbstractPlottable* graph) const;

  MachineRoofs roofs_;
  QString not_reported_;  // the last snapshot's "does not report" note, "" when it reports the steps' cost
  std::vector<Dots> dots_;  // prefill, decode, prefill_b, decode_b
  QCPItemText* note_;
};

}  // namespace inferscope::gui
