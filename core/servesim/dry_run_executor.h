// serve-sim --dry-run: no forward pass. Each step costs a modelled time, and each request
// "generates" deterministic token ids until its output_tokens are done.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>

#include "core/executor/step_executor.h"
#include "core/servesim/tensor_parallel.h"

namespace inferscope {

// step seconds = fixed_s + per_token_s x tokens computed in the step: the weights are read once per
// step (fixed), and every token adds its matmul work. Defaults: SmolLM2-135M Q4_1 on the CPU of the
// development machine (5 ms + 3 ms per token; the measurements are in dry_run_executor.cpp).
struct DryRunCost {
  double fixed_s = 0.0;
  double per_token_s = 0.0;
  double seconds(int32_t tokens) const { return fixed_s + per_token_s * tokens; }
};
DryRunCost default_dry_run_cost();

// A device's roofline: a step takes max(bytes / bandwidth, FLOPs / peak) + the overhead.
struct RooflineDevice {
  double bandwidth_bytes_per_s = 0;
  double peak_flops = 0;
  double step_overhead_s = 0;
  double seconds(double flops, double bytes) const;
};

// What a step asks of the device: its FLOPs and the bytes it reads (the engine's step-cost model).
struct StepDemand {
  double flops = 0, bytes = 0;
};
using StepDemandFn = std::function<StepDemand(const StepPlan& plan)>;

// How a dry run prices a step: the linear cost, or a roofline device with the step's demand.
struct DryRunPricing {
  DryRunPricing(DryRunCost cost) : linear(cost) {}              // NOLINT: a linear cost is a pricing
  DryRunPricing(RooflineDevice device) : roofline(device) {}    // NOLINT: so is a device
  DryRunCost linear;
  std::optional<RooflineDevice> roofline;  // set: priced on it (linear unused)
  // Roofline only: each device does 1/devices of the step's FLOPs and bytes, then the all-reduces.
  TensorParallel tensor_parallel;
};

class DryRunExecutor final : public StepExecutor {
 public:
  // `demand` is needed (and only used) with a roofline device.
  DryRunExecutor(DryRunPricing pricing, int32_t vocab_size, StepDemandFn demand = nullptr);
  StepResult execute(const StepPlan& plan) override;

 private:
  DryRunPricing pricing_;
  int32_t vocab_size_;
  StepDemandFn demand_;
};

}  // namespace inferscope
