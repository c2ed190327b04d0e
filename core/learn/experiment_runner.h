// Runs an experiment (experiment.h): each run's workload through run_workload on a fresh engine
// over the loaded model, with the base config and the run's toggles, greedy and to each request's
// output_tokens; then every value (experiment_values.h), the filled narration and the first
// conclusion whose condition holds.
#pragma once
#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "core/engine/engine_config.h"
#include "core/learn/experiment.h"
#include "core/learn/experiment_values.h"

namespace inferscope {

class LlamaModel;

struct ExperimentResult {
  std::vector<MeasuredRun> runs;  // in the experiment's order
  std::vector<AttentionBenchRow> attention_sweep;  // the experiment's sweep, when it has one
  ValueMap values;
  std::vector<std::string> narration;  // filled
  std::string conclusion;              // filled ("" when none holds)
  bool cancelled = false;
};

struct ExperimentRunOptions {
  // Called on the running thread: the run in progress (0-based) and its requests ended so far.
  std::function<void(size_t run, int32_t done, int32_t total)> on_progress;
  const std::atomic<bool>* cancel = nullptr;  // true: the run in progress is aborted and nothing is narrated
};

// Throws std::runtime_error for a config the engine refuses (naming the run) and ExpressionError
// for narration that names a value nothing measured.
ExperimentResult run_experiment(const Experiment& experiment, const LlamaModel& model, const EngineConfig& base,
                                const ExperimentRunOptions& options = {});

// The narration and conclusion of `experiment` over `values` (run_experiment's last part).
void narrate(const Experiment& experiment, ExperimentResult& result);

}  // namespace inferscope
