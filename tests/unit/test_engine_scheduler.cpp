// The scheduler's engine-facing policies on real KV managers, stepped with the dry-run executor:
// chunked prefill under a token budget (decodes first), max_running, the static policy, and ending
// or rebinding requests between steps.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/kv/kv_config.h"
#include "core/sched/dry_run_executor.h"
#include "core/sched/scheduler.h"
#include "tests/support/dry_run_bench.h"

namespace inferscope {
namespace {

constexpr int32_t kVocab = test::DryRunBench::kVocab;
const KvGeometry& kGeometry = test::DryRunBench::kGeometry;

KvConfig paged(int32_t blocks) {
  KvConfig c;
  c.block_size = 16;
  c.budget_bytes = kGeometry.bytes_per_token() * 16 * blocks;
  return c;
}

Request request(RequestId id, int32_t prompt, int32_t output) {
  Request r;
  r.id = id;
  for (int32_t i = 0; i < prompt; ++i) r.tokens.push_back((id * 131 + i) % kVocab);
  r.prompt_tokens = prompt;
  r.max_output_tokens = output;
  return r;
}

using Bench = test::DryRunBench;

TEST(EngineScheduler, LongPromptIsChunkedBehindDecodes) {
  Bench b(paged(64), SchedulerConfig{SchedulerPolicy::Continuous, 10, 0});
  ASSERT_TRUE(b.scheduler.add(request(0, 4, 20)));
  b.step();  // 0's whole prompt (4 tokens) and its first token
  ASSERT_TRUE(b.scheduler.add(request(1, 25, 5)));
  StepPlan p = b.step();  // 0 decodes first; 1 gets the 9 tokens left of the budget
  ASSERT_EQ(p.seqs.size(), 2u);
  EXPECT_EQ(p.seqs[0].id, 0);
  EXPECT_FALSE(p.seqs[0].prefill);
  EXPECT_EQ(p.seqs[1].id, 1);
  EXPECT_EQ(p.seqs[1].n_new, 9);
  EXPECT_EQ(p.seqs[1].pos0(), 0);
  EXPECT_FALSE(p.seqs[1].sample);
  EXPECT_TRUE(b.last.first_token.empty());
  p = b.step();  // next chunk at position 9
  EXPECT_EQ(p.seqs[1].n_new, 9);
  EXPECT_EQ(p.seqs[1].pos0(), 9);
  EXPECT_EQ(p.new_tokens(), 10);
  p = b.step();  // the last 7 prompt tokens: 1 samples its first token
  EXPECT_EQ(p.seqs[1].n_new, 7);
  EXPECT_TRUE(p.seqs[1].sample);
  EXPECT_EQ(b.last.first_token, (std::vector<RequestId>{1}));
  EXPECT_EQ(b.scheduler.request(1).output_tokens(), 1);
  EXPECT_EQ(b.kv->length(1), 25);
}

TEST(EngineScheduler, MaxRunningCapsAdmission) {
  Bench b(paged(64), SchedulerConfig{SchedulerPolicy::Continuous, 0, 2});
  for (RequestId id : {0, 1, 2}) ASSERT_TRUE(b.scheduler.add(request(id, 4, id == 0 ? 2 : 6)));
  EXPECT_EQ(b.step().seqs.size(), 2u);
  EXPECT_EQ(b.scheduler.waiting().front(), 2);
  b.step();  // 0 finishes: 2 may join at the next step
  EXPECT_EQ(b.last.finished, (std::vector<RequestId>{0}));
  const StepPlan p = b.step();
  ASSERT_EQ(p.seqs.size(), 2u);
  EXPECT_EQ(p.seqs[1].id, 2);
}

TEST(EngineScheduler, StaticBatchRunsUntilItsLongestFinishes) {
  Bench b(paged(64), SchedulerConfig{SchedulerPolicy::Static, 0, 2});
  ASSERT_TRUE(b.scheduler.add(request(0, 4, 2)));
  ASSERT_TRUE(b.scheduler.add(request(1, 4, 5)));
  ASSERT_TRUE(b.scheduler.add(request(2, 4, 2)));
  EXPECT_EQ(b.step().seqs.size(), 2u);
  b.step();
  EXPECT_EQ(b.last.finished, (std::vector<RequestId>{0}));
  // A slot is free, but 2 waits for the batch (1 runs to its 5th token).
  while (b.scheduler.request(1).state != RequestState::Finished) {
    const StepPlan p = b.step();
    ASSERT_EQ(p.seqs.size(), 1u);
    EXPECT_EQ(p.seqs[0].id, 1);
  }
  const StepPlan p = b.step();
  ASSERT_EQ(p.seqs.size(), 1u);
  EXPECT_EQ(p.seqs[0].id, 2);
}

TEST(EngineScheduler, FinishFreesMemoryAndLetsTheQueueMove) {
  Bench b(paged(4), SchedulerConfig{});
  ASSERT_TRUE(b.scheduler.add(request(0, 40, 10)));
  ASSERT_TRUE(b.scheduler.add(request(1, 40, 10)));
  b.step();
  EXPECT_EQ(b.scheduler.running().size(), 1u);  // 1 waits for memory
  b.scheduler.finish(0, StopReason::Aborted);
  EXPECT_EQ(b.kv->stats().sequences, 0);
  EXPECT_EQ(b.scheduler.request(0).stop, StopReason::Aborted);
  const StepPlan p = b.step();
  ASSERT_EQ(p.seqs.size(), 1u);
  EXPECT_EQ(p.seqs[0].id, 1);
  b.scheduler.finish(0, StopReason::Aborted);  // ended already: nothing happens
  EXPECT_EQ(b.scheduler.running().size(), 1u);
}

TEST(EngineScheduler, RebindRecomputesOnTheNewCacheAndRefusesWhatNoLongerFits) {
  Bench b(paged(64), SchedulerConfig{});
  ASSERT_TRUE(b.scheduler.add(request(0, 10, 10)));
  ASSERT_TRUE(b.scheduler.add(request(1, 60, 10)));
  b.step();
  b.step();
  EXPECT_EQ(b.scheduler.preempt_all(), (std::vector<RequestId>{0, 1}));
  const KvConfig small = paged(4);  // 64 slots: 1 (60 + 10 - 1) no longer fits
  auto kv = make_kv_cache(kGeometry, small);
  EXPECT_EQ(b.scheduler.rebind(*kv, request_limit(*kv, small, 4096)), (std::vector<RequestId>{1}));
  EXPECT_EQ(b.scheduler.request(1).state, RequestState::Refused);
  b.kv = std::move(kv);
  const StepPlan p = b.step();  // 0 recomputes its prompt and its 2 tokens
  ASSERT_EQ(p.seqs.size(), 1u);
  EXPECT_EQ(p.seqs[0].n_new, 12);
  EXPECT_TRUE(p.seqs[0].prefill);
  EXPECT_EQ(b.scheduler.request(0).num_preemptions, 1);
}

}  // namespace
}  // namespace inferscope
