#include "core/sched/dry_run_executor.h"

#include <stdexcept>

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

DryRunExecutor::DryRunExecutor(DryRunCost cost, int32_t vocab_size) : cost_(cost), vocab_size_(vocab_size) {
  if (vocab_size <= 0) throw std::invalid_argument("dry run: empty vocabulary");
  if (cost.fixed_s < 0 || cost.per_token_s < 0 || cost.fixed_s + cost.per_token_s <= 0) {
    throw std::invalid_argument("dry run: step costs must be >= 0, and not both 0 (a step takes time)");
  }
}

double DryRunExecutor::execute(const StepPlan& plan, std::vector<SampledToken>& sampled) {
  sampled.clear();
  for (const ScheduledSeq& s : plan.seqs) {
    // The token at each position depends only on (request, position), so a preempted and
    // recomputed request "generates" the same ids again.
    const uint64_t h = mix((static_cast<uint64_t>(s.id) << 32) ^ s.history.size());
    sampled.push_back(SampledToken{{static_cast<TokenId>(h % static_cast<uint64_t>(vocab_size_))}, false, {}});
  }
  return cost_.seconds(plan.new_tokens());
}

}  // namespace inferscope
