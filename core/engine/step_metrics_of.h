// One step's StepMetrics, from what the scheduler planned, what the executor measured, what the cache
// held during the step and what the step-cost model prices it at: the one place a step's figures meet.
#pragma once
#include <cstdint>

#include "core/engine/engine_metrics.h"
#include "core/engine/step_cost.h"
#include "core/executor/step_executor.h"
#include "core/kv/kv_cache.h"
#include "core/sched/scheduler.h"

namespace inferscope {

// When the step ran, and what the engine held around it.
struct StepContext {
  double ended_s = 0;           // the engine's clock after the step
  double duration_s = 0;        // the step's time on that clock
  double chosen_k = -1;         // the most drafts its speculating decodes could score, mean (-1: none)
  KvStats during;               // the cache before finished requests let go
  int32_t waiting = 0;          // requests left waiting after it
};

StepMetrics step_metrics_of(const StepPlan& plan, const StepResult& result, const StepCostModel& cost,
                            const StepContext& context);

}  // namespace inferscope
