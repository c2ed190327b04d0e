// How an EngineCore is run: a dry run or the model, the metrics windows, and the seams tests use.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string_view>

#include "core/engine/engine_metrics.h"
#include "core/executor/forward_factory.h"
#include "core/quant/matrix_conversion.h"
#include "core/servesim/dry_run_executor.h"

namespace inferscope {

struct EngineCoreOptions {
  // Set: no forward pass; each step costs this modelled time on a virtual clock (serve-sim --dry-run).
  std::optional<DryRunPricing> dry_run;
  size_t step_window = EngineMetrics::kStepWindow;          // steps kept for metrics (SIZE_MAX: all)
  size_t finished_window = EngineMetrics::kFinishedWindow;  // finished requests kept (SIZE_MAX: all)
  // Called from a worker thread when a background weight conversion has finished: the driver
  // should call step() soon (the Engine wakes its thread).
  std::function<void()> wake;
  // Progress of the conversion to config.quant's level that the constructor runs (none when empty).
  ConversionProgressFn conversion_progress;
  // Test seam, empty otherwise: called just before steps that fail only on exhaustion in practice
  // ("convert weights" at once, "schedule", "complete"), so tests can make them throw.
  std::function<void(std::string_view where)> test_fault;
  // Builds the forward passes (at construction, on a device switch, for new weights); tests give one
  // whose device fails.
  ForwardMaker forward_maker = inferscope::make_forward;
};

}  // namespace inferscope
