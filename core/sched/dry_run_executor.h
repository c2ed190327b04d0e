// serve-sim --dry-run: no forward pass. Each step costs a modelled time, and each request
// "generates" deterministic token ids until its output_tokens are done.
#pragma once
#include <cstdint>

#include "core/sched/step_executor.h"

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

class DryRunExecutor final : public StepExecutor {
 public:
  DryRunExecutor(DryRunCost cost, int32_t vocab_size);
  double execute(const StepPlan& plan, std::vector<SampledToken>& sampled) override;

 private:
  DryRunCost cost_;
  int32_t vocab_size_;
};

}  // namespace inferscope
