// A scheduler over a real KV cache with the dry-run executor: steps on a virtual clock, for tests;
// and the requests and cache budgets those tests use.
#pragma once
#include <memory>
#include <vector>

#include "core/kv/kv_config.h"
#include "core/servesim/dry_run_executor.h"
#include "core/sched/scheduler.h"

namespace inferscope::test {

struct DryRunBench {
  static constexpr int32_t kVocab = 1000;
  static constexpr int32_t kContext = 4096;
  static inline const KvGeometry kGeometry{1, 1, 8, DType::F16};  // 32 bytes per token

  explicit DryRunBench(const KvConfig& kv_config, const SchedulerConfig& config = {})
      : kv(make_kv_cache(kGeometry, kv_config)),
        scheduler(*kv, request_limit(*kv, kv_config, kContext), config),
        executor(DryRunCost{0.01, 0.001}, kVocab) {}
  // Schedules, executes and completes one step; returns its plan (the outcome is in `last`).
  StepPlan step() {
    StepPlan plan = scheduler.schedule();
    last = scheduler.complete(plan, executor.execute(plan).sampled);
    return plan;
  }
  std::unique_ptr<KvCache> kv;
  Scheduler scheduler;
  DryRunExecutor executor;
  StepOutcome last;
};

// Budgets in bytes of DryRunBench::kGeometry: `sequences` reservations of max_seq_len tokens, or
// `blocks` blocks.
inline KvConfig contiguous(int32_t max_seq_len, int32_t sequences) {
  KvConfig c;
  c.kind = KvKind::Contiguous;
  c.max_seq_len = max_seq_len;
  c.budget_bytes = DryRunBench::kGeometry.bytes_per_token() * max_seq_len * sequences;
  return c;
}

inline KvConfig paged(int32_t blocks, int32_t block_size = 16, bool prefix_cache = true) {
  KvConfig c;
  c.kind = KvKind::Paged;
  c.block_size = block_size;
  c.budget_bytes = DryRunBench::kGeometry.bytes_per_token() * block_size * blocks;
  c.prefix_cache = prefix_cache;
  return c;
}

// A request of `prompt` distinct ids (offset by `salt`) that wants `output` tokens.
inline Request request(RequestId id, int32_t prompt, int32_t output, double arrival_s = 0, int32_t salt = 0) {
  Request r;
  r.id = id;
  r.arrival_s = arrival_s;
  for (int32_t i = 0; i < prompt; ++i) r.tokens.push_back((salt * 7919 + id * 131 + i) % DryRunBench::kVocab);
  r.prompt_tokens = prompt;
  r.max_output_tokens = output;
  return r;
}

}  // namespace inferscope::test
