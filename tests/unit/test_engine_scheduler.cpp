// The scheduler's engine-facing policies on real KV managers, stepped with the dry-run executor:
// chunked prefill under a token budget (decodes first), max_running, the static policy, and ending
// or rebinding requests between steps.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/kv/kv_config.h"
#include "core/servesim/dry_run_executor.h"
#include "core/sched/scheduler.h"
#include "tests/support/dry_run_bench.h"

namespace inferscope {
namespace {

const KvGeometry& kGeometry = test::DryRunBench::kGeometry;

using test::paged;
using test::request;

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

TEST(EngineScheduler, StaticBatchFillsAcrossStepsUnderTheTokenBudget) {
  // A budget of 10 tokens holds one 10-token prompt per step: the batch keeps forming until all 3
  // (max_running) run, and a request arriving once it is formed waits for the next batch.
  Bench b(paged(64), SchedulerConfig{SchedulerPolicy::Static, 10, 3});
  for (RequestId id : {0, 1, 2}) ASSERT_TRUE(b.scheduler.add(request(id, 10, 6)));
  EXPECT_EQ(b.step().seqs.size(), 1u);
  EXPECT_EQ(b.step().seqs.size(), 2u);  // 0 decodes, 1 joins with 9 prompt tokens
  EXPECT_EQ(b.step().seqs.size(), 3u);  // 2 joins: the batch is full
  ASSERT_TRUE(b.scheduler.add(request(3, 8, 6)));
  while (b.scheduler.request(2).state != RequestState::Finished) {
    for (const ScheduledSeq& s : b.step().seqs) EXPECT_NE(s.id, 3);
  }
  EXPECT_EQ(b.step().seqs.front().id, 3);
}

TEST(EngineScheduler, StaticBatchClosesWhenTheQueueRunsDry) {
  Bench b(paged(64), SchedulerConfig{SchedulerPolicy::Static, 10, 4});
  ASSERT_TRUE(b.scheduler.add(request(0, 4, 6)));
  EXPECT_EQ(b.step().seqs.size(), 1u);  // everyone waiting was admitted: the batch is formed
  ASSERT_TRUE(b.scheduler.add(request(1, 4, 6)));
  EXPECT_EQ(b.step().seqs.size(), 1u);
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
