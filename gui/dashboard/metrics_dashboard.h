// The live dashboard: one QCustomPlot per engine quantity (TTFT, the engine's decode throughput,
// tokens per step, the request timeline, KV usage, KV waste, prefix-cache hit rate, attention per
// step, speculative decoding) on one time axis (seconds since the engine started), so a prefill
// spike lines up with a TTFT point and a jump in KV usage; and the roofline (FLOP/s against FLOPs per
// byte). Every chart has its help (gui/help/help_texts.h) as tooltip and "?" button. Lines break
// over idle gaps; configuration changes are marked on every time chart. Redrawn from whole
// snapshots at a few Hz; graphs are built once and reused.
#pragma once
#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <memory>

#include "core/engine/engine_metrics.h"
#include "gui/dashboard/roofline_series.h"

class QCustomPlot;
class QGridLayout;

namespace inferscope::gui {
class RequestTimeline;
class RooflineView;
}  // namespace inferscope::gui

class MetricsDashboard : public QWidget {
  Q_OBJECT
 public:
  explicit MetricsDashboard(QWidget* parent = nullptr);
  ~MetricsDashboard() override;
  // Redraws from one engine snapshot (called by a QTimer at 4-10 Hz, never per token). Series are
  // rebuilt from the snapshot's rings (steps: the last 1024 steps; requests: recently finished + live).
  // A panel the snapshot lists in not_reported (a remote server's /metrics lacks its quantity) draws
  // none of its points and its note says so, naming snapshot.source; an unknown name there throws
  // std::invalid_argument naming it. An empty list (the local engine) draws every panel again.
  void update_from(const inferscope::EngineMetricsSnapshot& snapshot);
  // Forgets the steps and marks (a new engine); the machine's roofs stay.
  void clear();
  // The machine's measured roofs for the roofline (it says "measuring the machine…" until then).
  void set_roofs(const inferscope::gui::MachineRoofs& roofs);
  // A configuration the engine applied at `time_s` (seconds since it started): a dotted line with
  // `label` (a few words) on every time plot.
  void mark_config_change(double time_s, const QString& label);
  // For the comparison view: a second, read-only snapshot drawn overlaid (dashed), or none.
  // own_clock: its times are on another clock than the first's (a simulated run's virtual one), so
  // its series go on a time axis of their own along the top, fitted to its span, instead of squeezed
  // into a corner of the first run's; their names end in "· top axis".
  void set_overlay(const inferscope::EngineMetricsSnapshot* other, const QString& label_a, const QString& label_b,
                   bool own_clock = false);
  // Every plot, for tests and export: name (objectName) -> plot.
  QList<QCustomPlot*> plots() const;
  QCustomPlot* plot(const QString& name) const;
  inferscope::gui::RooflineView* roofline() const;
  inferscope::gui::RequestTimeline* timeline() const;
  // Writes every plot as NAME.png and NAME.csv into dir (atomically, QSaveFile); returns the files.
  QStringList export_all(const QString& dir) const;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};
