// A remote workload run as a local run's WorkloadResult, on hand-made runs: latencies from arrival,
// token counts from usage, texts without token ids, steps from gauge samples, totals from counters,
// and the panels a server without some counters cannot fill.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/remote/remote_workload_result.h"
#include "core/remote/workload_target.h"

namespace inferscope {
namespace {

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

RemoteRequestResult finished(int32_t id, double arrival, double sent, std::string text, int64_t completion_tokens) {
  RemoteRequestResult r;
  r.id = id;
  r.arrival_s = arrival;
  r.sent_s = sent;
  r.reply.text = std::move(text);
  r.reply.finish_reason = "length";
  r.reply.usage = UsageReport{12, completion_tokens};
  r.reply.timing.time_to_first_token_s = 0.1;
  r.reply.timing.e2e_s = 0.5;
  r.reply.timing.chunk_gaps_s = {0.1, 0.2};
  return r;
}

const RemoteEndpoint kEndpoint{"http://127.0.0.1:8000", "secret-key", "tiny"};

ServerInfo server(ServerKind kind) {
  ServerInfo info;
  info.kind = kind;
  return info;
}

TEST(RemoteWorkloadResult, RequestsCountFromArrivalWithUsageAndText) {
  RemoteWorkloadResult run;
  run.duration_s = 2;
  run.requests = {finished(0, 0, 0, "Once upon", 8), finished(1, 0.5, 0.7, "a time", 4)};
  RemoteRequestResult failed;
  failed.id = 2;
  failed.arrival_s = 1;
  failed.sent_s = 1;
  failed.reply.outcome = RemoteOutcome::Failed;
  failed.reply.error = "HTTP 500 from http://127.0.0.1:8000/v1/completions: boom";
  failed.reply.timing.e2e_s = 0.05;
  run.requests.push_back(failed);

  const WorkloadResult r = workload_result_of(run, kEndpoint, server(ServerKind::Vllm));
  EXPECT_EQ(r.metrics.source, "vLLM at http://127.0.0.1:8000 (tiny)");
  ASSERT_EQ(r.metrics.requests.size(), 3u);
  const RequestMetrics& second = r.metrics.requests[1];
  EXPECT_DOUBLE_EQ(second.time_to_first_token_seconds, 0.2 + 0.1) << "the wait for a client slot counts";
  EXPECT_DOUBLE_EQ(second.e2e_request_latency_seconds, 0.2 + 0.5);
  EXPECT_EQ(second.inter_token_latency_seconds, (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(second.prompt_tokens, 12);
  EXPECT_EQ(second.generation_tokens, 4);
  EXPECT_EQ(second.finish_reason, "length");
  EXPECT_EQ(r.metrics.requests[2].finish_reason, "error");
  EXPECT_EQ(r.metrics.requests[2].time_to_first_token_seconds, -1) << "no chunk came";

  ASSERT_EQ(r.outputs.size(), 3u);
  EXPECT_EQ(r.outputs[0].text, "Once upon");
  EXPECT_TRUE(r.outputs[0].tokens.empty()) << "servers stream text, not ids";
  EXPECT_EQ(r.outputs[2].finish_reason, "error");
  EXPECT_EQ(r.outputs[2].error, failed.reply.error);

  EXPECT_EQ(r.summary.requests_total, 3);
  EXPECT_EQ(r.summary.requests_finished, 2);
  EXPECT_EQ(r.summary.requests_refused, 1);
  EXPECT_EQ(r.summary.output_tokens, 12);
  EXPECT_DOUBLE_EQ(r.summary.tokens_per_second, 12 / 2.0);
  EXPECT_DOUBLE_EQ(r.summary.e2e_request_latency_seconds_p50, (0.5 + 0.7) / 2);
}

TEST(RemoteWorkloadResult, GaugeSamplesBecomeStepsAndCountersTheTotals) {
  RemoteWorkloadResult run;
  run.duration_s = 1;
  run.requests = {finished(0, 0, 0, "x", 5)};
  ServerGauges busy;
  busy.requests_running = 2;
  busy.requests_waiting = 1;
  busy.kv_cache_usage = 0.4;
  ServerGauges idle = busy;
  idle.requests_running = 0;
  idle.kv_cache_usage = 0.0;
  run.samples = {{0.25, busy}, {0.5, idle}, {0.75, busy}};
  ServerCounters increase;
  increase.prompt_tokens = 30;
  increase.generation_tokens = 20;
  increase.steps = 9;
  increase.preemptions = 1;
  increase.prefix_cache_queries = 30;
  increase.prefix_cache_hits = 15;
  run.counters = increase;

  const WorkloadResult r = workload_result_of(run, kEndpoint, server(ServerKind::Vllm));
  ASSERT_EQ(r.metrics.steps.size(), 2u) << "the idle sample is no step";
  EXPECT_DOUBLE_EQ(r.metrics.steps[1].time_s, 0.75);
  EXPECT_DOUBLE_EQ(r.metrics.steps[1].duration_s, 0.25);
  EXPECT_EQ(r.metrics.steps[0].num_requests_running, 2);
  EXPECT_EQ(r.metrics.steps[0].num_requests_waiting, 1);
  EXPECT_DOUBLE_EQ(r.summary.kv_cache_usage_perc_peak, 0.4);
  EXPECT_DOUBLE_EQ(r.summary.kv_cache_usage_perc_mean, 0.4);
  EXPECT_EQ(r.summary.max_concurrent_requests, 2);
  EXPECT_EQ(r.summary.steps, 9);
  EXPECT_EQ(r.summary.num_preemptions, 1);
  EXPECT_DOUBLE_EQ(r.summary.prefix_cache_hit_rate, 0.5);
  EXPECT_EQ(r.summary.prefill_tokens, 30);
  EXPECT_EQ(r.summary.decode_tokens, 20);
  EXPECT_FALSE(has(r.metrics.not_reported, "kv_cache_usage_perc"));
  EXPECT_FALSE(has(r.metrics.not_reported, "preemptions"));
  EXPECT_FALSE(has(r.metrics.not_reported, "prefix_cache_hit_rate"));
  EXPECT_TRUE(has(r.metrics.not_reported, "kv_internal_fragmentation_perc")) << "no server reports fragmentation";
  EXPECT_TRUE(has(r.metrics.not_reported, "spec_acceptance")) << "no speculative counters";
}

TEST(RemoteWorkloadResult, AServerWithoutMetricsReportsOnlyWhatTheClientMeasured) {
  RemoteWorkloadResult run;
  run.duration_s = 1;
  run.requests = {finished(0, 0, 0, "x", 5)};
  run.metrics_error = "HTTP 404 from http://127.0.0.1:8080/metrics";
  const WorkloadResult r = workload_result_of(run, {"http://127.0.0.1:8080", "", ""}, server(ServerKind::LlamaCpp));
  EXPECT_EQ(r.metrics.source, "llama.cpp at http://127.0.0.1:8080");
  for (const char* panel : {"kv_cache_usage_perc", "kv_internal_fragmentation_perc", "kv_reserved_unused_perc", "preemptions",
                            "prefix_cache_hit_rate", "attention_seconds", "spec_acceptance", "decode_tokens_per_second"}) {
    EXPECT_TRUE(has(r.metrics.not_reported, panel)) << panel;
  }
  EXPECT_TRUE(r.metrics.steps.empty());
  EXPECT_EQ(r.summary.output_tokens, 5) << "usage still counts";
  EXPECT_DOUBLE_EQ(r.summary.time_to_first_token_seconds_p50, 0.1);
}

// serve-sim's report of a server's run (workload_json): what the server did not measure is null and
// named, never a 0 that reads as measured.
TEST(RemoteWorkloadResult, TheReportNullsAndNamesWhatTheServerDidNotMeasure) {
  RemoteWorkloadResult run;
  run.duration_s = 1;
  run.requests = {finished(0, 0, 0, "x", 5)};
  run.metrics_error = "HTTP 404 from http://127.0.0.1:8080/metrics";
  const nlohmann::json j = workload_json(workload_result_of(run, {"http://127.0.0.1:8080", "", ""}, server(ServerKind::LlamaCpp)), false);
  const nlohmann::json& unavailable = j["unavailable"];
  for (const char* key : {"steps", "prefill_tokens", "decode_tokens", "kv_cache_usage_perc_peak", "num_preemptions",
                          "prefix_cache_queries", "prefix_cache_hit_rate", "flops", "bytes_read", "weight_bytes"}) {
    EXPECT_TRUE(j[key].is_null()) << key;
    EXPECT_NE(std::find(unavailable.begin(), unavailable.end(), key), unavailable.end()) << key;
  }
  EXPECT_EQ(j["output_tokens"], 5) << "usage still counts";
  EXPECT_EQ(j["requests_finished"], 1);
  EXPECT_EQ(j["metrics_error"], run.metrics_error);
  const nlohmann::json& request = j["requests"][0];
  EXPECT_EQ(request["generation_tokens"], 5);
  for (const char* key : {"request_queue_time_seconds", "num_preemptions", "spec_decode"}) {
    EXPECT_TRUE(request[key].is_null()) << key;
  }
}

TEST(RemoteWorkloadResult, TheServersCountersAreMeasuredFigures) {
  RemoteWorkloadResult run;
  run.duration_s = 1;
  run.requests = {finished(0, 0, 0, "x", 5)};
  ServerCounters counters;
  counters.steps = 6;
  counters.prompt_tokens = 12;
  counters.generation_tokens = 5;
  counters.preemptions = 0;
  run.counters = counters;
  const nlohmann::json j = workload_json(workload_result_of(run, kEndpoint, server(ServerKind::Vllm)), false);
  EXPECT_EQ(j["steps"], 6);
  EXPECT_EQ(j["prefill_tokens"], 12);
  EXPECT_EQ(j["decode_tokens"], 5);
  EXPECT_EQ(j["num_preemptions"], 0) << "a counter that stayed at 0 is a measured 0";
  EXPECT_FALSE(j.contains("metrics_error"));
}

TEST(WorkloadTarget, AServerRefusesWhatOnlyTheLocalEngineDoes) {
  const ServerWorkload target{kEndpoint, server(ServerKind::Vllm)};
  WorkloadRunOptions dry;
  dry.dry_run = DryRunPricing(DryRunCost{});
  EXPECT_THROW(run_workload_on(target, {}, dry), std::invalid_argument);
  WorkloadRunOptions logits;
  logits.keep_logits = true;
  EXPECT_THROW(run_workload_on(target, {}, logits), std::invalid_argument);
}

}  // namespace
}  // namespace inferscope
