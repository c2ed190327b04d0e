// serve-sim's run loop: requests arrive on a clock, the scheduler plans each step, an executor runs
// it, and the metrics record what the KV cache held while it ran.
#pragma once
#include <vector>

#include "core/kv/kv_cache.h"
#include "core/sched/scheduler.h"
#include "core/sched/serve_metrics.h"
#include "core/sched/step_executor.h"

namespace inferscope {

struct ServeSimResult {
  ServeSummary summary;
  std::vector<ServeRequestResult> requests;  // by request id
};

// Runs every request to its end (finished or refused). virtual_clock: arrivals and step durations
// are virtual seconds and idle gaps are skipped (the dry run); else the wall clock, sleeping until
// arrivals. Throws std::logic_error if the scheduler stalls with requests left (never a hang).
ServeSimResult run_serve_sim(std::vector<Request> requests, KvCache& kv, const RequestLimit& limit,
                             StepExecutor& executor, bool virtual_clock, const SchedulerConfig& config = {});

}  // namespace inferscope
