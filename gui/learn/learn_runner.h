// Runs a guided experiment off the GUI thread (core/learn/experiment_runner.h) on the loaded model,
// held by a shared pointer so it outlives a model switch mid-run. Progress is polled (atomics);
// cancel aborts the run in progress and ends the experiment without narration.
#pragma once
#include <QString>
#include <memory>

#include "core/engine/engine_config.h"
#include "core/learn/experiment_runner.h"
#include "core/model/llama_model.h"
#include "gui/bridge/cancellable_job.h"

namespace inferscope::gui {

class LearnRunner : public CancellableJob {
  Q_OBJECT
 public:
  using CancellableJob::CancellableJob;

  // Starts the experiment; false when one is already running.
  bool start(std::shared_ptr<const Experiment> experiment, std::shared_ptr<const LlamaModel> model, EngineConfig base);
  // Where a run of `experiment` is, in words: "3 of 8 requests done", after "run 2 of 3 (paged): "
  // when it has several runs; "starting…" before a run has counted its requests.
  static QString progress_text(const Experiment& experiment, const JobProgress& p);

 signals:
  void finished(std::shared_ptr<const inferscope::ExperimentResult> result);
};

}  // namespace inferscope::gui
