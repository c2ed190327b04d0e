// Runs an A/B comparison off the GUI thread: side A, then B, over the same requests with the same
// greedy sampling, and again A, B, … for as many runs per side as asked (a simulated side runs once:
// a dry run gives the same figures every time), so the table can tell a change from run-to-run noise. A local side runs through run_workload on a fresh engine core over the loaded
// model (held by a shared pointer, so it outlives a model switch mid-run); a simulated side runs it as
// a dry run priced on a device (run_simulated_side); a server side replays the requests against the
// server (run_remote_side). Progress is polled (cheap atomics, no per-step
// signals); cancel aborts the requests left and ends the comparison.
#pragma once
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "core/engine/engine_config.h"
#include "core/model/llama_model.h"
#include "core/sample/sampler.h"
#include "core/sched/request.h"
#include "gui/bridge/cancellable_job.h"
#include "gui/compare/comparison.h"
#include "gui/compare/remote_side.h"
#include "gui/compare/simulated_side.h"

namespace inferscope::gui {

// One side of a comparison: a configuration of the local engine, a server, or a simulated device.
using CompareSide = std::variant<EngineConfig, RemoteSide, SimulatedSide>;

struct CompareJob {
  std::shared_ptr<const LlamaModel> model;  // needed by local and simulated sides and to pair two local runs' tokens
  CompareSide a, b;
  std::vector<Request> requests;
  SamplingParams sampling;
  std::string workload;  // its name, for the results and the export
  int runs_per_side = 1;
  std::vector<RequestId> synthetic_prompts;  // requests whose prompts are pseudo-random ids (OutputPair::synthetic_prompt)
};

class CompareRunner : public CancellableJob {
  Q_OBJECT
 public:
  using CancellableJob::CancellableJob;

  // Starts the job; false when one is already running. Its progress: run 0 is side A, 1 side B.
  bool start(CompareJob job);

 signals:
  void finished(std::shared_ptr<const inferscope::gui::Comparison> comparison);
};

}  // namespace inferscope::gui
