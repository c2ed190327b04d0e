#include "gui/learn/learn_runner.h"

namespace inferscope::gui {

LearnRunner::LearnRunner(QObject* parent) : QObject(parent) {}

LearnRunner::~LearnRunner() { cancel_ = true; }

bool LearnRunner::start(std::shared_ptr<const Experiment> experiment, std::shared_ptr<const LlamaModel> model,
                        EngineConfig base) {
  if (running_) return false;
  running_ = true;
  cancel_ = false;
  run_ = done_ = total_ = 0;
  worker_.post([this, experiment, model, base] {
    ExperimentRunOptions options;
    options.cancel = &cancel_;
    options.on_progress = [this](size_t run, int32_t done, int32_t total) {
      run_ = static_cast<int>(run);
      done_ = done;
      total_ = total;
    };
    auto result = std::make_shared<ExperimentResult>();
    QString error;
    try {
      *result = run_experiment(*experiment, *model, base, options);
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    // Back on the GUI thread (dropped when the runner is gone).
    QMetaObject::invokeMethod(this, [this, result, error] {
      running_ = false;
      if (!error.isEmpty()) {
        emit failed(error);
      } else if (result->cancelled) {
        emit cancelled();
      } else {
        emit finished(result);
      }
    }, Qt::QueuedConnection);
  });
  return true;
}

void LearnRunner::cancel() {
  if (running_) cancel_ = true;
}

QString LearnRunner::progress_text(const Experiment& experiment, const Progress& p) {
  const QString done = p.total > 0 ? tr("%1 of %2 requests done").arg(p.done).arg(p.total) : tr("starting…");
  if (experiment.runs.size() < 2 || p.run >= static_cast<int>(experiment.runs.size())) return done;
  return tr("run %1 of %2 (%3): %4")
      .arg(p.run + 1)
      .arg(experiment.runs.size())
      .arg(QString::fromStdString(experiment.runs[static_cast<size_t>(p.run)].name), done);
}

}  // namespace inferscope::gui
