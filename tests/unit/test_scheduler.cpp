// The FCFS iteration-level scheduler over real KV cache managers, driven by the dry-run executor:
// admission order, waiting for memory, refusal, preemption and recomputation, paged vs contiguous
// concurrency, and prefix sharing.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/kv/kv_config.h"
#include "core/servesim/dry_run_executor.h"
#include "core/sched/scheduler.h"
#include "tests/support/dry_run_bench.h"

namespace inferscope {
namespace {

const KvGeometry& kGeometry = test::DryRunBench::kGeometry;  // 32 bytes per token

using test::contiguous;
using test::paged;
using test::request;

// A scheduler over its own cache, stepped with the dry-run executor.
using Bench = test::DryRunBench;

std::vector<RequestId> ids_of(const StepPlan& plan) {
  std::vector<RequestId> ids;
  for (const ScheduledSeq& s : plan.seqs) ids.push_back(s.id);
  return ids;
}

TEST(Scheduler, DecodesFirstThenAdmitsInArrivalOrderWhileMemoryLasts) {
  Bench b(contiguous(16, 2));
  for (RequestId id : {0, 1, 2}) ASSERT_TRUE(b.scheduler.add(request(id, 4, 3)));

  StepPlan p = b.step();  // two regions: 0 and 1 are admitted with their whole prompts, 2 waits
  EXPECT_EQ(ids_of(p), (std::vector<RequestId>{0, 1}));
  EXPECT_TRUE(p.seqs[0].prefill);
  EXPECT_EQ(p.seqs[0].n_new, 4);
  EXPECT_EQ(p.seqs[0].pos0(), 0);
  EXPECT_EQ(b.last.first_token, (std::vector<RequestId>{0, 1}));
  EXPECT_EQ(b.scheduler.waiting().front(), 2);

  p = b.step();  // decode: each feeds the token it sampled, at position 4
  EXPECT_EQ(ids_of(p), (std::vector<RequestId>{0, 1}));
  EXPECT_FALSE(p.seqs[1].prefill);
  EXPECT_EQ(p.seqs[1].n_new, 1);
  EXPECT_EQ(p.seqs[1].pos0(), 4);
  EXPECT_EQ(b.kv->length(1), 5);

  b.step();  // third output token: 0 and 1 finish and free their regions at once
  EXPECT_EQ(b.last.finished, (std::vector<RequestId>{0, 1}));
  EXPECT_EQ(b.kv->stats().sequences, 0);
  EXPECT_EQ(b.scheduler.request(0).output_tokens(), 3);
  EXPECT_EQ(b.scheduler.request(0).state, RequestState::Finished);

  p = b.step();
  EXPECT_EQ(ids_of(p), (std::vector<RequestId>{2}));
  EXPECT_TRUE(p.seqs[0].prefill);
}

TEST(Scheduler, HeadOfQueueIsNeverOvertaken) {
  Bench b(paged(4));  // 64 token slots
  ASSERT_TRUE(b.scheduler.add(request(0, 40, 4)));
  ASSERT_TRUE(b.scheduler.add(request(1, 40, 4)));  // does not fit next to 0
  ASSERT_TRUE(b.scheduler.add(request(2, 4, 4)));   // would fit, but arrived after 1
  EXPECT_EQ(ids_of(b.step()), (std::vector<RequestId>{0}));
  while (b.scheduler.request(0).state != RequestState::Finished) {
    EXPECT_EQ(ids_of(b.step()), (std::vector<RequestId>{0}));
  }
  EXPECT_EQ(ids_of(b.step()), (std::vector<RequestId>{1, 2}));
}

TEST(Scheduler, RefusesWhatCouldNeverFitAndSaysWhy) {
  Bench c(contiguous(16, 2));
  EXPECT_FALSE(c.scheduler.add(request(0, 10, 8)));  // 17 slots > max_seq_len 16
  const Request& r = c.scheduler.request(0);
  EXPECT_EQ(r.state, RequestState::Refused);
  EXPECT_NE(r.refusal.find("needs 17 KV slots"), std::string::npos) << r.refusal;
  EXPECT_NE(r.refusal.find("max_seq_len 16"), std::string::npos) << r.refusal;
  EXPECT_TRUE(c.scheduler.add(request(1, 10, 7)));  // exactly 16 slots fits

  Bench p(paged(4));
  EXPECT_FALSE(p.scheduler.add(request(0, 60, 6)));
  EXPECT_NE(p.scheduler.request(0).refusal.find("whole paged KV budget (4 blocks of 16 tokens)"), std::string::npos)
      << p.scheduler.request(0).refusal;
}

TEST(Scheduler, ContextLengthBoundsEveryManager) {
  const KvConfig config = paged(1024);
  auto kv = make_kv_cache(kGeometry, config);
  const RequestLimit limit = request_limit(*kv, config, 128);
  EXPECT_EQ(limit.max_kv_tokens, 128);
  EXPECT_NE(limit.why.find("context length"), std::string::npos);
}

TEST(Scheduler, PreemptsTheNewestAndPutsItFirstInLine) {
  Bench b(paged(4, 16, false));  // 64 slots
  ASSERT_TRUE(b.scheduler.add(request(0, 16, 40)));
  ASSERT_TRUE(b.scheduler.add(request(1, 16, 40)));
  ASSERT_TRUE(b.scheduler.add(request(2, 16, 40)));
  b.step();  // each prompt fills one block: 3 of the 4 are taken
  ASSERT_EQ(b.scheduler.running().size(), 3u);
  StepPlan p;
  while (p.preempted.empty()) p = b.step();
  EXPECT_EQ(p.preempted, (std::vector<RequestId>{2}));
  EXPECT_EQ(b.scheduler.waiting().front(), 2);
  EXPECT_EQ(b.scheduler.request(2).state, RequestState::Waiting);
  EXPECT_EQ(b.scheduler.request(2).num_preemptions, 1);
  EXPECT_EQ(b.kv->length(2), 0) << "its blocks are freed";
  EXPECT_EQ(ids_of(p), (std::vector<RequestId>{0, 1})) << "the older requests keep decoding";
}

}  // namespace
}  // namespace inferscope
