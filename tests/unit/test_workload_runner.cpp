// The engine's step loop driven through whole workloads by the runner, with the dry-run executor on
// a virtual clock: refusal, waiting for memory, arrivals, preemption and recomputation, paged vs
// contiguous concurrency, prefix sharing, and the summary's figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/workload/serve_summary.h"
#include "core/workload/workload_runner.h"
#include "core/model/llama_model.h"
#include "tests/support/dry_run_bench.h"
#include "tests/support/synthetic_model.h"

namespace inferscope {
namespace {

using test::contiguous;
using test::paged;
using test::request;

// A model whose KV geometry is DryRunBench's (1 layer, 1 KV head of 8: 32 bytes per token in f16),
// with its vocabulary and context; the dry run never runs its weights.
const LlamaModel& model() {
  static const std::unique_ptr<LlamaModel> m = [] {
    test::SyntheticModelSpec spec;
    spec.dim = 8;
    spec.n_layers = 1;
    spec.n_heads = 1;
    spec.n_kv_heads = 1;
    spec.ffn_dim = 8;
    spec.vocab = test::DryRunBench::kVocab;
    spec.context_length = test::DryRunBench::kContext;
    return test::load_synthetic_model(spec);
  }();
  return *m;
}

WorkloadResult simulate(const KvConfig& kv, const std::vector<Request>& requests) {
  EngineConfig config;
  config.kv = kv;
  WorkloadRunOptions options;
  options.dry_run = DryRunCost{0.01, 0.001};
  return run_workload(model(), config, requests, options);
}

const RequestMetrics& metrics_of(const WorkloadResult& r, RequestId id) {
  return *std::find_if(r.metrics.requests.begin(), r.metrics.requests.end(),
                       [&](const RequestMetrics& m) { return m.id == id; });
}
double first_token_s(const WorkloadResult& r, RequestId id) {
  const RequestMetrics& m = metrics_of(r, id);
  return m.arrival_s + m.time_to_first_token_seconds;
}
double finished_s(const WorkloadResult& r, RequestId id) {
  const RequestMetrics& m = metrics_of(r, id);
  return m.arrival_s + m.e2e_request_latency_seconds;
}

TEST(ServeSim, OversizedRequestEndsTheRunInsteadOfHanging) {
  const WorkloadResult r = simulate(contiguous(32, 1), {request(0, 8, 8), request(1, 30, 10), request(2, 8, 8, 0.5)});
  EXPECT_EQ(r.summary.requests_finished, 2);
  EXPECT_EQ(r.summary.requests_refused, 1);
  EXPECT_EQ(r.outputs[1].finish_reason, "error");
  EXPECT_NE(r.outputs[1].error.find("needs 39 KV slots"), std::string::npos) << r.outputs[1].error;
  EXPECT_EQ(metrics_of(r, 1).time_to_first_token_seconds, -1);
}

// The local engine measures every figure: its report has no nulls and names nothing unavailable, even
// where a figure is 0 (no preemptions, no prefix hits).
TEST(ServeSim, ALocalRunsReportHasEveryFigure) {
  const nlohmann::json j = workload_json(simulate(contiguous(64, 2), {request(0, 8, 8), request(1, 8, 8)}), false);
  EXPECT_TRUE(j["unavailable"].empty()) << j["unavailable"];
  for (const ServeFigure& f : serve_figures()) EXPECT_FALSE(j[f.key].is_null()) << f.key;
  EXPECT_EQ(j["num_preemptions"], 0);
  EXPECT_TRUE(j["requests"][0]["num_preemptions"].is_number());
}

TEST(ServeSim, AdmissionWaitsForMemoryAndProceedsWhenItFrees) {
  const WorkloadResult r = simulate(contiguous(32, 1), {request(0, 8, 10), request(1, 8, 10)});
  EXPECT_EQ(r.summary.max_concurrent_requests, 1);
  EXPECT_EQ(r.summary.requests_finished, 2);
  // The second request's first token comes one step after the first request finished.
  EXPECT_GT(first_token_s(r, 1), finished_s(r, 0));
  EXPECT_NEAR(first_token_s(r, 1) - finished_s(r, 0), 0.01 + 0.001 * 8, 1e-9);
  EXPECT_EQ(r.summary.steps, 20);
  // Virtual clock: 2 prefills of 8 tokens and 18 single-token decodes.
  EXPECT_NEAR(r.summary.duration_s, 20 * 0.01 + 0.001 * (16 + 18), 1e-9);
  EXPECT_NEAR(r.summary.tokens_per_second, 20 / r.summary.duration_s, 1e-9);
}

TEST(ServeSim, ArrivalsWaitOnTheVirtualClock) {
  const WorkloadResult r = simulate(paged(16), {request(0, 8, 4), request(1, 8, 4, 5.0)});
  EXPECT_NEAR(first_token_s(r, 1), 5.0 + 0.01 + 0.008, 1e-9);
  EXPECT_NEAR(r.summary.time_to_first_token_seconds_p50, 0.018, 1e-9);
  // The idle gap is not a step: KV means cover only time with requests holding memory.
  EXPECT_EQ(r.summary.steps, 8);
  // each request holds 1 of the 16 blocks (6.25%) in its steps; the 5 s idle gap would pull the mean near 0
  EXPECT_GT(r.summary.kv_cache_usage_perc_mean, 0.04);
}

TEST(ServeSim, PreemptedRequestIsRecomputedAndFinishesItsOutput) {
  std::vector<Request> requests;
  for (RequestId id = 0; id < 4; ++id) requests.push_back(request(id, 16, 40));
  const WorkloadResult r = simulate(paged(8, 16, false), requests);
  EXPECT_GT(r.summary.num_preemptions, 0);
  EXPECT_EQ(r.summary.requests_finished, 4);
  int32_t preempted = 0;
  for (const RequestMetrics& q : r.metrics.requests) {
    EXPECT_EQ(q.generation_tokens, 40);
    preempted += q.num_preemptions > 0;
  }
  EXPECT_GT(preempted, 0);
  // The step timeline names each preemption, and the preempted request comes back as a prefill.
  int64_t named = 0;
  for (size_t i = 0; i < r.metrics.steps.size(); ++i) {
    for (RequestId id : r.metrics.steps[i].preempted) {
      ++named;
      const auto next = std::find_if(r.metrics.steps.begin() + static_cast<ptrdiff_t>(i) + 1, r.metrics.steps.end(), [&](const StepMetrics& st) {
        return std::any_of(st.sequences.begin(), st.sequences.end(), [&](const StepSequence& q) { return q.id == id; });
      });
      ASSERT_NE(next, r.metrics.steps.end()) << "request " << id << " never ran again after its preemption";
      for (const StepSequence& q : next->sequences) {
        if (q.id == id) {
          EXPECT_GT(q.prefill_tokens, 0) << "request " << id << " resumed without recomputing";
        }
      }
    }
  }
  EXPECT_EQ(named, r.summary.num_preemptions);
  // Recomputation prefills prompts and already generated tokens again.
  EXPECT_GT(r.summary.prefill_tokens, 4 * 16);
  EXPECT_EQ(r.summary.output_tokens, 160);
  // Each request generates the same tokens whether or not it was preempted.
  const WorkloadResult alone = simulate(paged(8, 16, false), {request(3, 16, 40)});
  EXPECT_EQ(r.outputs[3].tokens, alone.outputs[0].tokens);
}

TEST(ServeSim, PagedRunsMoreRequestsAtOnceThanContiguousOnTheSameBudget) {
  std::vector<Request> requests;
  for (RequestId id = 0; id < 16; ++id) requests.push_back(request(id, 8, 8));
  // Same bytes: 4 contiguous reservations of 64 tokens, or 16 blocks of 16.
  const WorkloadResult c = simulate(contiguous(64, 4), requests);
  const WorkloadResult p = simulate(paged(16), requests);
  EXPECT_EQ(c.summary.max_concurrent_requests, 4);
  EXPECT_EQ(p.summary.max_concurrent_requests, 16);
  EXPECT_EQ(c.summary.requests_finished, 16);
  EXPECT_EQ(p.summary.requests_finished, 16);
  // Contiguous wastes most of each reservation (a request fills at most 16 of its 64 slots: >= 75%
  // unused); paged only the tails of its blocks.
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
  const WorkloadResult off = simulate(paged(32, 16, false), requests);
  const WorkloadResult on = simulate(paged(32, 16, true), requests);
  EXPECT_EQ(off.summary.prefill_tokens, 4 * 56);
  EXPECT_EQ(on.summary.prefill_tokens, 56 + 3 * 8);
  EXPECT_EQ(on.summary.prefix_cache_hits, 3 * 48);
  EXPECT_EQ(on.summary.prefix_cache_queries, 4 * 56);
  EXPECT_NEAR(on.summary.prefix_cache_hit_rate, 3.0 * 48 / (4 * 56), 1e-12);
  EXPECT_EQ(off.summary.prefix_cache_hit_rate, 0.0);
  EXPECT_LT(on.summary.time_to_first_token_seconds_p99, off.summary.time_to_first_token_seconds_p99);
  EXPECT_EQ(on.outputs[2].tokens, off.outputs[2].tokens);
  // Each admission names the prompt tokens it found cached: the step's hits, request by request.
  std::map<RequestId, int32_t> first_admission;
  for (const StepMetrics& st : on.metrics.steps) {
    int32_t cached = 0;
    for (const StepSequence& s : st.sequences) {
      cached += s.cached_tokens;
      if (s.prefill_tokens > 0) first_admission.try_emplace(s.id, s.cached_tokens);
    }
    EXPECT_EQ(cached, st.prefix_cache_hits);
  }
  EXPECT_EQ(first_admission, (std::map<RequestId, int32_t>{{0, 0}, {1, 48}, {2, 48}, {3, 48}}));
}

TEST(ServeSummary, QuantilesInterpolate) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 1.0), 4);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.99), 7);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
}

// The serve figures are the one description of a run's figures: summary_json writes each row's key
// with the value its getter reads (a whole count as an integer), and the summary carries the weights and
// the attention scratch that Compare's table shows.
TEST(ServeSummary, JsonHoldsEveryFigureOnce) {
  EngineMetricsSnapshot m;
  m.weight_bytes = 3 << 20;
  StepMetrics step;
  step.duration_s = 0.5;
  step.attention_scratch_bytes = 4096;
  step.num_requests_running = 3;
  m.steps = {step, step};
  m.steps[1].attention_scratch_bytes = 1024;
  m.steps[1].num_requests_running = 2;
  const ServeSummary s = summarize(m, 2.0);
  EXPECT_EQ(s.weight_bytes, 3 << 20);
  EXPECT_EQ(s.attention_scratch_bytes_peak, 4096);
  const nlohmann::json j = summary_json(s);
  std::set<std::string> keys;
  for (const ServeFigure& f : serve_figures()) {
    SCOPED_TRACE(f.key);
    EXPECT_TRUE(keys.insert(f.key).second) << "a figure declared twice";
    ASSERT_TRUE(j.contains(f.key));
    EXPECT_DOUBLE_EQ(j[f.key].get<double>(), f.value(s));
    if (whole_unit(f.unit) && f.value(s) == std::round(f.value(s))) {
      EXPECT_TRUE(j[f.key].is_number_integer());
    }
    EXPECT_EQ(f.better == Better::Neither && !f.label.empty(), !f.neutral_reason.empty()) << "a row without a direction says why";
  }
  EXPECT_EQ(j["num_requests_running_mean"].get<double>(), 2.5) << "a mean of counts stays a fraction";
  EXPECT_EQ(j.size(), keys.size() + 2) << "the figures, spec_mode and spec_decode";
}

}  // namespace
}  // namespace inferscope
