// The scheduler's side of speculative decoding, with a hand-written executor standing in for the
// verifier: draft slots per decode (k, the output limit, the step's token budget), speculation
// never preempting anyone, the rejected tail given back to the cache, and accepted drafts named so
// the paged cache can share their blocks.
#include <gtest/gtest.h>

#include <vector>

#include "core/kv/kv_config.h"
#include "core/sched/scheduler.h"
#include "tests/support/dry_run_bench.h"

namespace inferscope {
namespace {

using test::paged;
using test::request;

// A scheduler over a paged cache of `blocks` blocks of 8, speculating with `k` draft slots.
struct SpecBench {
  SpecBench(int32_t blocks, int32_t k, int32_t max_batch_tokens = 0)
      : kv(make_kv_cache(test::DryRunBench::kGeometry, paged(blocks, 8))),
        scheduler(*kv, request_limit(*kv, paged(blocks, 8), 4096), SchedulerConfig{{}, max_batch_tokens, 0, k}) {}

  // Completes `plan` as a verifier would that accepted `accepted` drafts of each speculating decode
  // (tokens 100, 101, ... then its own token 7).
  StepOutcome complete(const StepPlan& plan, int32_t accepted) {
    std::vector<SampledToken> sampled;
    for (const ScheduledSeq& s : plan.seqs) {
      SampledToken t;
      if (s.draft_slots > 0) {
        t.drafted = s.draft_slots;
        t.verification.accepted = std::min(accepted, s.draft_slots);
        for (int32_t i = 0; i < t.verification.accepted; ++i) t.tokens.push_back(100 + i);
      }
      t.tokens.push_back(7);
      sampled.push_back(t);
    }
    return scheduler.complete(plan, sampled);
  }

  std::unique_ptr<KvCache> kv;
  Scheduler scheduler;
};

TEST(SchedulerSpec, ADecodeHoldsKDraftSlotsAndKeepsOnlyTheAcceptedOnes) {
  SpecBench b(16, 4);
  ASSERT_TRUE(b.scheduler.add(request(0, 5, 20)));
  StepPlan p = b.scheduler.schedule();  // the prompt: no drafts in prefill
  ASSERT_EQ(p.seqs.size(), 1u);
  EXPECT_EQ(p.seqs[0].draft_slots, 0);
  b.complete(p, 0);

  p = b.scheduler.schedule();
  EXPECT_EQ(p.seqs[0].n_new, 1);
  EXPECT_EQ(p.seqs[0].draft_slots, 4);
  EXPECT_EQ(b.kv->length(0), 5 + 1 + 4);  // the known token and four draft slots
  EXPECT_EQ(p.draft_slots(), 4);
  b.complete(p, 2);
  // The token fed and the two accepted drafts stay; the two rejected slots are given back.
  EXPECT_EQ(b.kv->length(0), 5 + 1 + 2);
  const Request& r = b.scheduler.request(0);
  EXPECT_EQ(r.num_computed, 8);
  EXPECT_EQ(r.output_tokens(), 4);  // 7 from the prompt step, then 100, 101, 7
  EXPECT_EQ(std::vector<TokenId>(r.tokens.end() - 3, r.tokens.end()), (std::vector<TokenId>{100, 101, 7}));
}

TEST(SchedulerSpec, DraftsNeverRunPastTheOutputLimit) {
  SpecBench b(16, 8);
  ASSERT_TRUE(b.scheduler.add(request(0, 3, 4)));
  b.complete(b.scheduler.schedule(), 0);  // output 1 of 4
  const StepPlan p = b.scheduler.schedule();
  // Two more tokens at most can follow the one this step emits: 4 - 1 - 1 drafts.
  EXPECT_EQ(p.seqs[0].draft_slots, 2);
  const StepOutcome o = b.complete(p, 2);
  EXPECT_EQ(o.finished, (std::vector<RequestId>{0}));
  EXPECT_EQ(b.scheduler.request(0).output_tokens(), 4);
  EXPECT_EQ(b.kv->stats().sequences, 0);
}

TEST(SchedulerSpec, DraftSlotsCountAgainstTheStepBudget) {
  SpecBench b(64, 4, 6);
  for (RequestId id : {0, 1}) ASSERT_TRUE(b.scheduler.add(request(id, 3, 30)));
  b.complete(b.scheduler.schedule(), 0);  // both prompts: 6 tokens
  const StepPlan p = b.scheduler.schedule();
  ASSERT_EQ(p.seqs.size(), 2u);
  // Oldest first: 1 + 4 for request 0 leaves 1 token, the decode of request 1 alone.
  EXPECT_EQ(p.seqs[0].draft_slots, 4);
  EXPECT_EQ(p.seqs[1].draft_slots, 0);
  EXPECT_LE(p.new_tokens() + p.draft_slots(), 6);
}

TEST(SchedulerSpec, SpeculationNeverPreemptsAnyone) {
  // 2 blocks of 8: request 0 fills 7 slots, request 1 holds the other block.
  SpecBench b(2, 4);
  ASSERT_TRUE(b.scheduler.add(request(0, 6, 5)));
  ASSERT_TRUE(b.scheduler.add(request(1, 6, 5)));
  b.complete(b.scheduler.schedule(), 0);
  const StepPlan p = b.scheduler.schedule();
  EXPECT_TRUE(p.preempted.empty());
  ASSERT_EQ(p.seqs.size(), 2u);
  // Each decode fits its own token in its block; drafts would need a third block: none.
  EXPECT_EQ(p.seqs[0].draft_slots, 0);
  EXPECT_EQ(p.seqs[1].draft_slots, 0);
}

TEST(SchedulerSpec, AcceptedDraftsAreNamedSoTheirBlocksCanBeShared) {
  SpecBench b(16, 4);
  ASSERT_TRUE(b.scheduler.add(request(0, 5, 20)));
  b.complete(b.scheduler.schedule(), 0);   // prompt: 5 slots, output token 7
  b.complete(b.scheduler.schedule(), 4);   // 1 + 4 accepted: 10 slots, tokens up to 11 known
  b.complete(b.scheduler.schedule(), 0);   // 11 slots
  // The first block (8 tokens: 5 prompt, 7, 100, 101) is full and named: another sequence with the
  // same first 8 tokens and more finds it.
  const Request& r = b.scheduler.request(0);
  std::vector<TokenId> prompt(r.tokens.begin(), r.tokens.begin() + 8);
  prompt.push_back(3);
  EXPECT_EQ(b.kv->attach_prefix(99, prompt), 8);
}

TEST(SchedulerSpec, RequestsThatDoNotSpeculateGetNoSlots) {
  SpecBench b(16, 4);
  Request plain = request(0, 3, 10);
  plain.speculate = false;
  ASSERT_TRUE(b.scheduler.add(plain));
  b.complete(b.scheduler.schedule(), 0);
  EXPECT_EQ(b.scheduler.schedule().seqs[0].draft_slots, 0);
}

// The engine's adaptive choice caps each decode's slots; a decode left without slots asks for a
// shadow draft (made when drafts cost nothing, never scored), a plain request never does.
TEST(SchedulerSpec, EachDecodesDraftsFollowTheEnginesChoice) {
  SpecBench b(16, 4);
  ASSERT_TRUE(b.scheduler.add(request(0, 3, 20)));
  Request plain = request(1, 3, 20);
  plain.speculate = false;
  ASSERT_TRUE(b.scheduler.add(plain));
  EXPECT_EQ(b.scheduler.next_decodes().count, 0);  // both still in prefill
  b.complete(b.scheduler.schedule(), 0);
  const NextDecodes next = b.scheduler.next_decodes();
  EXPECT_EQ(next.count, 2);
  EXPECT_EQ(next.speculating, std::vector<RequestId>{0});

  b.scheduler.set_max_drafts(0, 2);
  StepPlan p = b.scheduler.schedule();
  EXPECT_EQ(p.seqs[0].draft_slots, 2);
  EXPECT_FALSE(p.seqs[0].shadow_draft);
  EXPECT_FALSE(p.seqs[1].shadow_draft);
  b.complete(p, 2);

  b.scheduler.set_max_drafts(0, 0);
  p = b.scheduler.schedule();
  EXPECT_EQ(p.seqs[0].draft_slots, 0);
  EXPECT_TRUE(p.seqs[0].shadow_draft);
  EXPECT_FALSE(p.seqs[1].shadow_draft);
}

TEST(SchedulerSpec, OutOfRangeKIsRefused) {
  auto kv = make_kv_cache(test::DryRunBench::kGeometry, paged(4, 8));
  const RequestLimit limit = request_limit(*kv, paged(4, 8), 64);
  EXPECT_THROW(Scheduler(*kv, limit, SchedulerConfig{{}, 0, 0, 17}), std::invalid_argument);
  EXPECT_THROW(Scheduler(*kv, limit, SchedulerConfig{{}, 0, 0, -1}), std::invalid_argument);
}

}  // namespace
}  // namespace inferscope
