// The FCFS iteration-level scheduler over real KV cache managers, driven by the dry-run executor:
// admission order, waiting for memory, refusal, preemption and recomputation, paged vs contiguous
// concurrency, and prefix sharing.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/kv/kv_config.h"
#include "core/sched/dry_run_executor.h"
#include "core/sched/scheduler.h"
#include "core/sched/serve_sim.h"
#include "tests/support/dry_run_bench.h"

namespace inferscope {
namespace {

constexpr int32_t kVocab = test::DryRunBench::kVocab;
constexpr int32_t kContext = test::DryRunBench::kContext;
const KvGeometry& kGeometry = test::DryRunBench::kGeometry;  // 32 bytes per token

KvConfig contiguous(int32_t max_seq_len, int32_t sequences) {
  KvConfig c;
  c.kind = KvKind::Contiguous;
  c.max_seq_len = max_seq_len;
  c.budget_bytes = kGeometry.bytes_per_token() * max_seq_len * sequences;
  return c;
}

KvConfig paged(int32_t blocks, int32_t block_size = 16, bool prefix_cache = true) {
  KvConfig c;
  c.kind = KvKind::Paged;
  c.block_size = block_size;
  c.budget_bytes = kGeometry.bytes_per_token() * block_size * blocks;
  c.prefix_cache = prefix_cache;
  return c;
}

// A request of `prompt` distinct ids (offset by `salt`) that wants `output` tokens.
Request request(RequestId id, int32_t prompt, int32_t output, double arrival_s = 0, int32_t salt = 0) {
  Request r;
  r.id = id;
  r.arrival_s = arrival_s;
  for (int32_t i = 0; i < prompt; ++i) r.tokens.push_back((salt * 7919 + id * 131 + i) % kVocab);
  r.prompt_tokens = prompt;
  r.max_output_tokens = output;
  return r;
}

// A scheduler over its own cache, stepped with the dry-run executor.
using Bench = test::DryRunBench;

ServeSimResult simulate(const KvConfig& config, std::vector<Request> requests) {
  auto kv = make_kv_cache(kGeometry, config);
  DryRunExecutor executor(StepCost{0.01, 0.001}, kVocab);
  return run_serve_sim(std::move(requests), *kv, request_limit(*kv, config, kContext), executor, true);
}

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

TEST(ServeSim, OversizedRequestEndsTheRunInsteadOfHanging) {
  const ServeSimResult r = simulate(contiguous(32, 1), {request(0, 8, 8), request(1, 30, 10), request(2, 8, 8, 0.5)});
  EXPECT_EQ(r.summary.requests_finished, 2);
  EXPECT_EQ(r.summary.requests_refused, 1);
  EXPECT_EQ(r.requests[1].request.state, RequestState::Refused);
  EXPECT_FALSE(r.requests[1].request.refusal.empty());
  EXPECT_EQ(r.requests[1].first_token_s, -1);
}

TEST(ServeSim, AdmissionWaitsForMemoryAndProceedsWhenItFrees) {
  const ServeSimResult r = simulate(contiguous(32, 1), {request(0, 8, 10), request(1, 8, 10)});
  EXPECT_EQ(r.summary.max_concurrent_requests, 1);
  EXPECT_EQ(r.summary.requests_finished, 2);
  // The second request's first token comes one step after the first request finished.
  EXPECT_GT(r.requests[1].first_token_s, r.requests[0].finished_s);
  EXPECT_NEAR(r.requests[1].first_token_s - r.requests[0].finished_s, 0.01 + 0.001 * 8, 1e-9);
  EXPECT_EQ(r.summary.steps, 20);
  // Virtual clock: 2 prefills of 8 tokens and 18 single-token decodes.
  EXPECT_NEAR(r.summary.duration_s, 20 * 0.01 + 0.001 * (16 + 18), 1e-9);
  EXPECT_NEAR(r.summary.tokens_per_second, 20 / r.summary.duration_s, 1e-9);
}

TEST(ServeSim, ArrivalsWaitOnTheVirtualClock) {
  const ServeSimResult r = simulate(paged(16), {request(0, 8, 4), request(1, 8, 4, 5.0)});
  EXPECT_NEAR(r.requests[1].first_token_s, 5.0 + 0.01 + 0.008, 1e-9);
  EXPECT_NEAR(r.summary.time_to_first_token_seconds_p50, 0.018, 1e-9);
  // The idle gap is not a step: KV means cover only time with requests holding memory.
  EXPECT_EQ(r.summary.steps, 8);
  EXPECT_GT(r.summary.kv_cache_usage_perc_mean, 0.04);
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

TEST(ServeSim, PreemptedRequestIsRecomputedAndFinishesItsOutput) {
  std::vector<Request> requests;
  for (RequestId id = 0; id < 4; ++id) requests.push_back(request(id, 16, 40));
  const ServeSimResult r = simulate(paged(8, 16, false), requests);
  EXPECT_GT(r.summary.num_preemptions, 0);
  EXPECT_EQ(r.summary.requests_finished, 4);
  int32_t preempted = 0;
  for (const ServeRequestResult& q : r.requests) {
    EXPECT_EQ(q.request.output_tokens(), 40);
    preempted += q.request.num_preemptions > 0;
  }
  EXPECT_GT(preempted, 0);
  // Recomputation prefills prompts and already generated tokens again.
  EXPECT_GT(r.summary.prefill_tokens, 4 * 16);
  EXPECT_EQ(r.summary.output_tokens, 160);
  // Each request generates the same tokens whether or not it was preempted.
  const ServeSimResult alone = simulate(paged(8, 16, false), {request(3, 16, 40)});
  EXPECT_EQ(r.requests[3].request.tokens, alone.requests[0].request.tokens);
}

TEST(ServeSim, PagedRunsMoreRequestsAtOnceThanContiguousOnTheSameBudget) {
  std::vector<Request> requests;
  for (RequestId id = 0; id < 16; ++id) requests.push_back(request(id, 8, 8));
  // Same bytes: 4 contiguous reservations of 64 tokens, or 16 blocks of 16.
  const ServeSimResult c = simulate(contiguous(64, 4), requests);
  const ServeSimResult p = simulate(paged(16), requests);
  EXPECT_EQ(c.summary.max_concurrent_requests, 4);
  EXPECT_EQ(p.summary.max_concurrent_requests, 16);
  EXPECT_EQ(c.summary.requests_finished, 16);
  EXPECT_EQ(p.summary.requests_finished, 16);
  // Contiguous wastes most of each reservation; paged only the tails of its blocks.
  EXPECT_GT(c.summary.kv_reserved_unused_perc_mean, 0.7);
  EXPECT_EQ(c.summary.kv_internal_fragmentation_perc_mean, 0.0);
  EXPECT_EQ(p.summary.kv_reserved_unused_perc_mean, 0.0);
  EXPECT_LT(p.summary.kv_internal_fragmentation_perc_mean, c.summary.kv_reserved_unused_perc_mean);
  EXPECT_LT(p.summary.duration_s, c.summary.duration_s);
  for (const ServeSummary& s : {c.summary, p.summary}) {
    EXPECT_GT(s.kv_cache_usage_perc_mean, 0.0);
    EXPECT_LE(s.kv_cache_usage_perc_mean, s.kv_cache_usage_perc_peak);
    EXPECT_LE(s.kv_cache_usage_perc_peak, 1.0);
  }
}

TEST(ServeSim, SharedPrefixIsComputedOnce) {
  // 4 requests with the same 48-token system prompt (3 full blocks) and 8 tokens of their own.
  std::vector<Request> requests;
  for (RequestId id = 0; id < 4; ++id) {
    Request r = request(id, 56, 4);
    for (int32_t i = 0; i < 48; ++i) r.tokens[i] = 500 + i;
    requests.push_back(r);
  }
  const ServeSimResult off = simulate(paged(32, 16, false), requests);
  const ServeSimResult on = simulate(paged(32, 16, true), requests);
  EXPECT_EQ(off.summary.prefill_tokens, 4 * 56);
  EXPECT_EQ(on.summary.prefill_tokens, 56 + 3 * 8);
  EXPECT_EQ(on.summary.prefix_cache_hits, 3 * 48);
  EXPECT_EQ(on.summary.prefix_cache_queries, 4 * 56);
  EXPECT_NEAR(on.summary.prefix_cache_hit_rate, 3.0 * 48 / (4 * 56), 1e-12);
  EXPECT_EQ(off.summary.prefix_cache_hit_rate, 0.0);
  EXPECT_LT(on.summary.time_to_first_token_seconds_p99, off.summary.time_to_first_token_seconds_p99);
  EXPECT_EQ(on.requests[2].request.tokens, off.requests[2].request.tokens);
}

TEST(ServeMetrics, QuantilesInterpolate) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 1.0), 4);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.99), 7);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
}

}  // namespace
}  // namespace inferscope
