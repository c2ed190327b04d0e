// The dashboard's two speculative-decoding panels (docs/ARCHITECTURE.md §3, "A speculating step").
// Over time, on the shared time axis: each drafting step's acceptance rate (dots) and the rate over
// the last kAcceptanceWindowSteps drafting steps (line), with the step's draft and verify seconds on
// the right axis, and on an axis of its own every decode step's draft length allowed (k = auto
// chooses it per step: 0 where drafts would not pay). Per draft position (bars): the share of drafts whose token at that position was
// accepted, under a line with the mean acceptance length (tokens per verify pass) and the mean
// draft and verify time per drafting step. The dashboard makes both plots and owns them; this fills them.
#pragma once
#include <QString>
#include <string>

#include "core/engine/engine_metrics.h"

class QCPBars;
class QCPBarsGroup;
class QCPGraph;
class QCPTextElement;
class QCustomPlot;

namespace inferscope::gui {

class SpecPlots {
 public:
  SpecPlots(QCustomPlot* over_time, QCustomPlot* by_position);
  void update_from(const EngineMetricsSnapshot& s);
  // The comparison's second run: its bars beside this run's, and both summaries (b null: none).
  void set_overlay(const EngineMetricsSnapshot* b, const QString& label_a, const QString& label_b);
  void clear();
  // What the panels say while they have nothing to draw.
  QString empty_note() const;

  // Named by the dashboard for the legend and the CSV; window's dashed overlay copy is the dashboard's.
  QCPGraph *per_step, *window, *draft_time, *verify_time, *chosen_k;
  QCPBars *positions, *positions_b;

 private:
  void show_summary();

  QCustomPlot* by_position_;
  QCPBarsGroup* group_;
  QCPTextElement* summary_;
  std::string mode_ = "none";
  QString summary_a_, summary_b_, label_a_, label_b_;
  int positions_shown_ = 0;  // the x range: draft positions 1..n
};

}  // namespace inferscope::gui
