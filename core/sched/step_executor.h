// Runs a scheduled step: computes the plan's new tokens and picks each sequence's next token.
#pragma once
#include <vector>

#include "core/sched/scheduler.h"

namespace inferscope {

class StepExecutor {
 public:
  virtual ~StepExecutor() = default;
  // The cache already holds room for every new token. Fills `sampled` (one per plan sequence, in
  // plan order) and returns the step's duration in seconds (measured, or modelled on a virtual clock).
  // Throws when the step fails; its sequences then hold slots never written (KvCache::discard them).
  virtual double execute(const StepPlan& plan, std::vector<SampledToken>& sampled) = 0;
  // The request has left for good: drop anything kept for it (its sampler).
  virtual void forget(RequestId /*id*/) {}
};

}  // namespace inferscope
