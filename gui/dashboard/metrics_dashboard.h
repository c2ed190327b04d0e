// The live dashboard: one QCustomPlot per engine quantity (TTFT, decode tokens/s, tokens per step,
// KV usage, KV waste, prefix-cache hit rate, attention per step, speculative decoding), all on one
// time axis (seconds since the engine started) so a prefill spike lines up with a TTFT point and a
// jump in KV usage. Redrawn from whole snapshots at a few Hz; graphs are built once and reused.
#pragma once
#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <memory>

#include "core/engine/engine_metrics.h"

class QCustomPlot;
class QGridLayout;

class MetricsDashboard : public QWidget {
  Q_OBJECT
 public:
  explicit MetricsDashboard(QWidget* parent = nullptr);
  ~MetricsDashboard() override;
  // Redraws from one engine snapshot (called by a QTimer at 4-10 Hz, never per token). Series are
  // rebuilt from the snapshot's rings (steps: the last 1024 steps; requests: recently finished + live).
  void update_from(const inferscope::EngineMetricsSnapshot& snapshot);
  void clear();
  // For the comparison view: a second, read-only snapshot drawn overlaid (dashed), or none.
  void set_overlay(const inferscope::EngineMetricsSnapshot* other, const QString& label_a, const QString& label_b);
  // Every plot, for tests and export: name (objectName) -> plot.
  QList<QCustomPlot*> plots() const;
  QCustomPlot* plot(const QString& name) const;
  // Writes every plot as NAME.png and NAME.csv into dir (atomically, QSaveFile); returns the files.
  QStringList export_all(const QString& dir) const;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
};
