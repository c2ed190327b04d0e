// inferscope-cli learn: runs a guided experiment (resources/experiments/*.json, the workbench's Learn
// tab) on a model and prints its narration with the measured numbers, or writes a Markdown report.
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/cli/commands.h"
#include "core/cli/model_options.h"
#include "core/common/atomic_file.h"
#include "core/learn/experiment_report.h"
#include "core/learn/experiment_runner.h"
#include "core/learn/narration.h"
#include "core/model/llama_model.h"

namespace inferscope::cli {

int cmd_learn(int argc, char** argv) {
  const std::vector<OptionSpec> specs = with_model_options({
      {"--experiment", "-e", true, "the experiment file (resources/experiments/*.json)"},
      {"--report", "", true, "write the results as a Markdown report to this file"},
      {"--json", "", false, "print the narration, conclusion and every value as JSON"},
  });
  if (print_help_if_asked("learn --model PATH --experiment FILE [--report OUT.md] [--json]", specs, argc, argv)) return 0;
  const Args args(specs, argc, argv, 2);
  const Experiment experiment = Experiment::load(args.required("--experiment"));
  const EngineConfig config = engine_config(args);
  auto model = load_model(args);
  ExperimentRunOptions options;
  int32_t shown = -1;  // requests done when the progress line was last written
  options.on_progress = [&](size_t run, int32_t done, int32_t total) {
    if (done == shown) return;
    shown = done;
    std::cerr << "\r" << experiment.runs[run].name << ": " << done << "/" << total << " requests" << std::flush;
  };
  const ExperimentResult result = run_experiment(experiment, *model, config, options);
  std::cerr << "\n";
  if (args.has("--report")) write_file_atomically(args.str("--report", ""), experiment_markdown(experiment, result, model->config().name));
  if (args.has("--json")) {
    std::cout << nlohmann::json{{"experiment", experiment.id}, {"narration", result.narration},
                                {"conclusion", result.conclusion}, {"values", result.values}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << experiment.title << "\n\n";
  for (const std::string& line : result.narration) std::cout << line << "\n\n";
  if (!result.conclusion.empty()) std::cout << "Conclusion: " << result.conclusion << "\n";
  return 0;
}

}  // namespace inferscope::cli
