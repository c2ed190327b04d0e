#include "gui/compare/compare_runner.h"

#include <algorithm>
#include <stdexcept>

namespace inferscope::gui {
namespace {

// What a side is, for an error: "configuration", "server" or "simulation".
const char* side_kind(const CompareSide& side) {
  if (std::holds_alternative<RemoteSide>(side)) return "server";
  return std::holds_alternative<SimulatedSide>(side) ? "simulation" : "configuration";
}

}  // namespace

bool CompareRunner::start(CompareJob job) {
  const int repeats = std::max(1, job.runs_per_side);
  const int requests = static_cast<int>(job.requests.size());
  return launch(requests, repeats, [this, job = std::move(job)]() -> Outcome {
    WorkloadRunOptions options;
    options.sampling = job.sampling;
    options.cancel = &cancel_;
    options.on_progress = [this](int32_t done, int32_t total) {
      done_ = done;
      total_ = total;
    };
    auto comparison = std::make_shared<Comparison>();
    comparison->workload = job.workload;
    comparison->sampling = job.sampling;
    const auto run_side = [&](const CompareSide& side) {
      if (const auto* config = std::get_if<EngineConfig>(&side)) {
        return run_workload_on(LocalWorkload{job.model.get(), *config}, job.requests, options);
      }
      if (const auto* simulated = std::get_if<SimulatedSide>(&side)) {
        return run_simulated_side(*job.model, *simulated, job.requests, options);
      }
      return run_remote_side(std::get<RemoteSide>(side), job.requests, options);
    };
    try {
      // A, B, A, B, …: slow drift of the machine (heat, other guests) falls on both sides alike.
      for (int repeat = 0; repeat < repeats_ && !cancel_; ++repeat) {
        repeat_ = repeat;
        for (int side = 0; side < 2 && !cancel_; ++side) {
          const CompareSide& config = side == 0 ? job.a : job.b;
          if (repeat > 0 && std::holds_alternative<SimulatedSide>(config)) continue;
          run_ = side;
          done_ = 0;
          WorkloadResult result = run_side(config);
          if (repeat == 0) {
            (side == 0 ? comparison->a : comparison->b) = std::move(result);
          } else {
            (side == 0 ? comparison->reruns_a : comparison->reruns_b).push_back(std::move(result));
          }
        }
      }
      comparison->outputs = pair_outputs(job.model.get(), comparison->a, comparison->b);
      for (OutputPair& pair : comparison->outputs) {
        pair.synthetic_prompt = std::ranges::find(job.synthetic_prompts, pair.id) != job.synthetic_prompts.end();
      }
    } catch (const std::exception& e) {
      return failure(QString("%1 %2: %3").arg(side_kind(run_ == 0 ? job.a : job.b), run_ == 0 ? "A" : "B", e.what()));
    }
    comparison->cancelled = cancel_;
    return {{}, comparison->cancelled, [this, comparison] { emit finished(comparison); }};
  });
}

}  // namespace inferscope::gui
