// The local server's /metrics (core/server/prometheus_exposition.h) from a hand-made snapshot: vLLM's
// names, types and labels, cumulative buckets, escaped labels; and read back by the same scrape reader
// that reads a real vLLM's /metrics, so a vLLM dashboard and our own remote view both understand it.
#include <gtest/gtest.h>

#include <string>

#include "core/remote/metric_snapshot.h"
#include "core/remote/server_metrics.h"
#include "core/server/prometheus_exposition.h"

namespace inferscope {
namespace {

EngineMetricsSnapshot snapshot() {
  EngineMetricsSnapshot s;
  s.num_requests_running = 3;
  s.num_requests_waiting = 2;
  s.kv.budget_bytes = 1000;
  s.kv.used_bytes = 250;
  s.prompt_tokens_total = 120;
  s.generation_tokens_total = 45;
  s.num_preemptions = 1;
  s.prefix_cache_queries = 100;
  s.prefix_cache_hits = 64;
  s.num_steps = 50;
  s.finished_by_reason = {{"stop", 4}, {"length", 2}};
  s.spec.add(3, 2);
  s.spec.add(3, 1);
  s.histograms.time_to_first_token.observe(0.03);
  s.histograms.time_to_first_token.observe(0.3);
  s.histograms.time_to_first_token.observe(9000);
  s.attention_seconds_total = 1.5;
  return s;
}

bool has_line(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST(PrometheusExposition, VllmNamesTypesAndLabels) {
  const std::string text = prometheus_text(snapshot(), "demo");
  EXPECT_TRUE(has_line(text, "# TYPE vllm:num_requests_running gauge"));
  EXPECT_TRUE(has_line(text, "vllm:num_requests_running{model_name=\"demo\"} 3"));
  EXPECT_TRUE(has_line(text, "vllm:num_requests_waiting{model_name=\"demo\"} 2"));
  EXPECT_TRUE(has_line(text, "vllm:kv_cache_usage_perc{model_name=\"demo\"} 0.25"));
  EXPECT_TRUE(has_line(text, "# TYPE vllm:prompt_tokens_total counter"));
  EXPECT_TRUE(has_line(text, "vllm:prompt_tokens_total{model_name=\"demo\"} 120"));
  EXPECT_TRUE(has_line(text, "vllm:generation_tokens_total{model_name=\"demo\"} 45"));
  EXPECT_TRUE(has_line(text, "vllm:num_preemptions_total{model_name=\"demo\"} 1"));
  EXPECT_TRUE(has_line(text, "vllm:prefix_cache_hits_total{model_name=\"demo\"} 64"));
  EXPECT_TRUE(has_line(text, "vllm:request_success_total{model_name=\"demo\",finished_reason=\"stop\"} 4"));
  EXPECT_TRUE(has_line(text, "vllm:request_success_total{model_name=\"demo\",finished_reason=\"abort\"} 0"));
  EXPECT_TRUE(has_line(text, "vllm:spec_decode_num_drafts_total{model_name=\"demo\"} 2"));
  EXPECT_TRUE(has_line(text, "vllm:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"demo\",position=\"1\"} 1"));
  EXPECT_TRUE(has_line(text, "inferscope:attention_seconds_total{model_name=\"demo\"} 1.5"));
  EXPECT_TRUE(has_line(text, "inferscope:steps_total{model_name=\"demo\"} 50"));
  // Every family has its HELP before its TYPE.
  for (size_t at = text.find("# TYPE "); at != std::string::npos; at = text.find("# TYPE ", at + 1)) {
    const std::string name = text.substr(at + 7, text.find(' ', at + 7) - at - 7);
    EXPECT_NE(text.rfind("# HELP " + name + " ", at), std::string::npos) << name;
  }
}

TEST(PrometheusExposition, HistogramBucketsAreCumulative) {
  const std::string text = prometheus_text(snapshot(), "demo");
  EXPECT_TRUE(has_line(text, "# TYPE vllm:time_to_first_token_seconds histogram"));
  EXPECT_TRUE(has_line(text, "vllm:time_to_first_token_seconds_bucket{model_name=\"demo\",le=\"0.02\"} 0"));
  EXPECT_TRUE(has_line(text, "vllm:time_to_first_token_seconds_bucket{model_name=\"demo\",le=\"0.04\"} 1"));
  EXPECT_TRUE(has_line(text, "vllm:time_to_first_token_seconds_bucket{model_name=\"demo\",le=\"0.5\"} 2"));
  EXPECT_TRUE(has_line(text, "vllm:time_to_first_token_seconds_bucket{model_name=\"demo\",le=\"2560\"} 2"));
  EXPECT_TRUE(has_line(text, "vllm:time_to_first_token_seconds_bucket{model_name=\"demo\",le=\"+Inf\"} 3"));
  EXPECT_TRUE(has_line(text, "vllm:time_to_first_token_seconds_count{model_name=\"demo\"} 3"));
  EXPECT_NE(text.find("vllm:time_to_first_token_seconds_sum{model_name=\"demo\"} 9000.33"), std::string::npos);
}

TEST(PrometheusExposition, ALabelValueIsEscaped) {
  const std::string text = prometheus_text(EngineMetricsSnapshot{}, "a \"b\"\\c\nd");
  EXPECT_TRUE(has_line(text, "vllm:num_requests_running{model_name=\"a \\\"b\\\"\\\\c\\nd\"} 0")) << text.substr(0, 300);
}

// The scrape reader that reads vLLM reads ours to the same numbers.
TEST(PrometheusExposition, OurVllmReaderReadsItBack) {
  const ServerScrape scrape = read_server_scrape(MetricSnapshot::parse(prometheus_text(snapshot(), "demo")), ServerKind::Vllm);
  EXPECT_EQ(scrape.counters.prompt_tokens, 120);
  EXPECT_EQ(scrape.counters.generation_tokens, 45);
  EXPECT_EQ(scrape.counters.preemptions, 1);
  EXPECT_EQ(scrape.counters.prefix_cache_queries, 100);
  EXPECT_EQ(scrape.counters.prefix_cache_hits, 64);
  EXPECT_EQ(scrape.counters.spec_drafts, 2);
  EXPECT_EQ(scrape.counters.spec_accepted_tokens, 3);
  EXPECT_EQ(scrape.counters.spec_accepted_per_position, (std::vector<double>{2, 1, 0}));
  EXPECT_EQ(scrape.gauges.requests_running, 3);
  EXPECT_EQ(scrape.gauges.requests_waiting, 2);
  EXPECT_EQ(scrape.gauges.kv_cache_usage, 0.25);
  const auto& ttft = scrape.latency[static_cast<size_t>(ServerLatency::Ttft)];
  ASSERT_TRUE(ttft.has_value());
  EXPECT_EQ(ttft->count, 3);
}

// What the engine's metrics feed the histograms: each phase of a request that ran, once.
TEST(ServingHistograms, EachPhaseOfARequestIsObservedOnce) {
  EngineMetrics m;
  m.on_arrival(1, 0.0, 10);
  m.on_scheduled(1, 0.5);
  m.on_token(1, 1.0);
  m.on_token(1, 1.25);
  m.on_token(1, 1.75);
  m.on_finished(1, 2.0, "length", 0);
  m.on_arrival(2, 3.0, 4);
  m.on_finished(2, 3.1, "abort", 0);
  const EngineMetricsSnapshot s = m.snapshot(4.0);
  const ServingHistograms& h = s.histograms;
  EXPECT_EQ(h.time_to_first_token.count, 1u);
  EXPECT_DOUBLE_EQ(h.time_to_first_token.sum, 1.0);
  EXPECT_EQ(h.inter_token_latency.count, 2u);
  EXPECT_DOUBLE_EQ(h.inter_token_latency.sum, 0.75);
  EXPECT_EQ(h.e2e_request_latency.count, 1u) << "a finished request's, not an aborted one's";
  EXPECT_DOUBLE_EQ(h.request_queue_time.sum, 0.5);
  EXPECT_DOUBLE_EQ(h.request_prefill_time.sum, 0.5);
  EXPECT_DOUBLE_EQ(h.request_decode_time.sum, 0.75);
  EXPECT_EQ(s.finished_by_reason.at("length"), 1);
  EXPECT_EQ(s.finished_by_reason.at("abort"), 1);
}

TEST(ServingHistograms, AValueOnABoundGoesInThatBucket) {
  Histogram h({0.1, 1.0});
  h.observe(0.1);
  h.observe(0.5);
  h.observe(5.0);
  EXPECT_EQ(h.counts, (std::vector<uint64_t>{1, 1, 1}));
  EXPECT_EQ(h.count, 3u);
}

}  // namespace
}  // namespace inferscope
