// The plots an experiment asks for (ExperimentPlot), drawn from its measured runs: "bars" (one value
// per run), "steps" (tokens computed per step over time, a line per run), "kv_blocks" (each run's
// block tables at its fullest moment), "timeline" (each run's request lanes) and "roofline" (the
// runs' steps under the machine's roofs; a second run as hollow dots), "kv_token", "prefix_hits",
// "attention_sweep", "spec_tokens" and "acceptance" (experiment.h).
#pragma once
#include <QString>
#include <QWidget>

#include "core/learn/experiment.h"
#include "core/learn/experiment_runner.h"

namespace inferscope {
class LlamaModel;
}

namespace inferscope::gui {

// A titled widget for `plot` over `result`; `model` decodes token ids for the block tables' tooltips.
QWidget* make_experiment_plot(const ExperimentPlot& plot, const ExperimentResult& result, const LlamaModel& model,
                              QWidget* parent);
// The caption a plot carries in the tab and in the exported report.
QString experiment_plot_caption(const ExperimentPlot& plot);

}  // namespace inferscope::gui
