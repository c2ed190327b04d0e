#include "core/servesim/dry_run_executor.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace inferscope {
namespace {

// splitmix64's finaliser: a well-mixed 64-bit hash of x.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

DryRunCost default_dry_run_cost() {
  // Fitted to real serve-sim steps of SmolLM2-135M-Instruct Q4_1 on the development machine
  // (2 AVX2 cores, f32 activations; best of 3): a decode step of 1 sequence ~8 ms, of 8 ~27 ms,
  // of 32 ~99 ms; a prefill of 32 tokens ~93 ms, of 128 ~334 ms. Long prompts cost somewhat more
  // per token than this line says (attention grows with the context).
  return DryRunCost{0.005, 0.003};
}

double RooflineDevice::seconds(double flops, double bytes) const {
  return std::max(bytes / bandwidth_bytes_per_s, flops / peak_flops) + step_overhead_s;
}

DryRunExecutor::DryRunExecutor(DryRunPricing pricing, int32_t vocab_size, StepDemandFn demand)
    : pricing_(pricing), vocab_size_(vocab_size), demand_(std::move(demand)) {
  if (vocab_size <= 0) throw std::invalid_argument("dry run: empty vocabulary");
  if (const auto& r = pricing_.roofline) {
    if (!(r->bandwidth_bytes_per_s > 0) || !(r->peak_flops > 0) || r->step_overhead_s < 0) {
      throw std::invalid_argument("dry run: a roofline device needs a positive bandwidth and peak");
    }
    if (!demand_) throw std::invalid_argument("dry run: a roofline device needs each step's FLOPs and bytes");
    const TensorParallel& tp = pricing_.tensor_parallel;
    if (tp.devices < 1 || (tp.devices > 1 && !(tp.link.bandwidth_bytes_per_s > 0))) {
      throw std::invalid_argument("dry run: tensor parallelism needs at least 1 device, and a link's bandwidth for more");
    }
    return;
  }
  if (pricing_.tensor_parallel.devices != 1) throw std::invalid_argument("dry run: tensor parallelism needs a roofline device");
  const DryRunCost& cost = pricing_.linear;
  if (cost.fixed_s < 0 || cost.per_token_s < 0 || cost.fixed_s + cost.per_token_s <= 0) {
    throw std::invalid_argument("dry run: step costs must be >= 0, and not both 0 (a step takes time)");
  }
}

StepResult DryRunExecutor::execute(const StepPlan& plan) {
  StepResult result;
  for (const ScheduledSeq& s : plan.seqs) {
    // The token at each position depends only on (request, position), so a preempted and
    // recomputed request "generates" the same ids again.
    const uint64_t h = mix((static_cast<uint64_t>(s.id) << 32) ^ s.history.size());
    result.sampled.push_back(SampledToken{{static_cast<TokenId>(h % static_cast<uint64_t>(vocab_size_))}, false, {}});
  }
  if (pricing_.roofline) {
    const StepDemand d = demand_(plan);
    const TensorParallel& tp = pricing_.tensor_parallel;
    result.seconds =
        pricing_.roofline->seconds(d.flops / tp.devices, d.bytes / tp.devices) + tp.step_seconds(plan.new_tokens());
  } else {
    result.seconds = pricing_.linear.seconds(plan.new_tokens());
  }
  return result;
}

}  // namespace inferscope
