#include "gui/learn/learn_runner.h"

namespace inferscope::gui {

bool LearnRunner::start(std::shared_ptr<const Experiment> experiment, std::shared_ptr<const LlamaModel> model,
                        EngineConfig base) {
  return launch(0, 1, [this, experiment, model, base]() -> Outcome {
    ExperimentRunOptions options;
    options.cancel = &cancel_;
    options.on_progress = [this](size_t run, int32_t done, int32_t total) {
      run_ = static_cast<int>(run);
      done_ = done;
      total_ = total;
    };
    auto result = std::make_shared<ExperimentResult>();
    try {
      *result = run_experiment(*experiment, *model, base, options);
    } catch (const std::exception& e) {
      return failure(QString::fromStdString(e.what()));
    }
    return {{}, result->cancelled, [this, result] { emit finished(result); }};
  });
}

QString LearnRunner::progress_text(const Experiment& experiment, const JobProgress& p) {
  const QString done = p.total > 0 ? tr("%1 of %2 requests done").arg(p.done).arg(p.total) : tr("starting…");
  if (experiment.runs.size() < 2 || p.run >= static_cast<int>(experiment.runs.size())) return done;
  return tr("run %1 of %2 (%3): %4")
      .arg(p.run + 1)
      .arg(experiment.runs.size())
      .arg(QString::fromStdString(experiment.runs[static_cast<size_t>(p.run)].name), done);
}

}  // namespace inferscope::gui
