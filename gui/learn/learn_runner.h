// Runs a guided experiment off the GUI thread (core/learn/experiment_runner.h) on the loaded model,
// held by a shared pointer so it outlives a model switch mid-run. Progress is polled (atomics);
// cancel aborts the run in progress and ends the experiment without narration.
#pragma once
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>

#include "core/engine/engine_config.h"
#include "core/learn/experiment_runner.h"
#include "core/model/llama_model.h"
#include "gui/bridge/background_worker.h"

namespace inferscope::gui {

class LearnRunner : public QObject {
  Q_OBJECT
 public:
  explicit LearnRunner(QObject* parent = nullptr);
  ~LearnRunner() override;

  // Starts the experiment; false when one is already running.
  bool start(std::shared_ptr<const Experiment> experiment, std::shared_ptr<const LlamaModel> model, EngineConfig base);
  void cancel();
  bool running() const { return running_; }

  struct Progress {
    int run = 0, done = 0, total = 0;
  };
  Progress progress() const { return {run_, done_, total_}; }
  // Where a run of `experiment` is, in words: "3 of 8 requests done", after "run 2 of 3 (paged): "
  // when it has several runs; "starting…" before a run has counted its requests.
  static QString progress_text(const Experiment& experiment, const Progress& p);

 signals:
  void finished(std::shared_ptr<const inferscope::ExperimentResult> result);
  void failed(const QString& message);
  void cancelled();

 private:
  bool running_ = false;
  std::atomic<bool> cancel_{false};
  std::atomic<int> run_{0}, done_{0}, total_{0};
  BackgroundWorker worker_;  // last: joined first, while the flags above still exist
};

}  // namespace inferscope::gui
