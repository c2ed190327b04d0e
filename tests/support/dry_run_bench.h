// A scheduler over a real KV cache with the dry-run executor: steps on a virtual clock, for tests.
#pragma once
#include <memory>
#include <vector>

#include "core/kv/kv_config.h"
#include "core/sched/dry_run_executor.h"
#include "core/sched/scheduler.h"

namespace inferscope::test {

struct DryRunBench {
  static constexpr int32_t kVocab = 1000;
  static constexpr int32_t kContext = 4096;
  static inline const KvGeometry kGeometry{1, 1, 8, DType::F16};  // 32 bytes per token

  explicit DryRunBench(const KvConfig& kv_config, const SchedulerConfig& config = {})
      : kv(make_kv_cache(kGeometry, kv_config)),
        scheduler(*kv, request_limit(*kv, kv_config, kContext), config),
        executor(StepCost{0.01, 0.001}, kVocab) {}
  // Schedules, executes and completes one step; returns its plan (the outcome is in `last`).
  StepPlan step() {
    StepPlan plan = scheduler.schedule();
    std::vector<SampledToken> sampled;
    executor.execute(plan, sampled);
    last = scheduler.complete(plan, sampled);
    return plan;
  }
  std::unique_ptr<KvCache> kv;
  Scheduler scheduler;
  DryRunExecutor executor;
  StepOutcome last;
};

}  // namespace inferscope::test
