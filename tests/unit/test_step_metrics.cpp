// The step metric table is the one description of every per-step metric: --metrics-json writes each
// row's key with the value its getter reads, and each unit formats its values as it says.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cmath>
#include <set>

#include "core/common/metric_unit.h"
#include "core/engine/engine_metrics.h"
#include "core/engine/metrics_json.h"
#include "core/engine/step_metrics.h"

namespace inferscope {
namespace {

// A step whose every scalar field holds a value of its own.
StepMetrics distinct_step() {
  StepMetrics m;
  m.time_s = 1.5;
  m.duration_s = 0.25;
  m.num_requests_running = 3;
  m.num_requests_waiting = 4;
  m.prefill_tokens = 5;
  m.decode_tokens = 6;
  m.kv_cache_usage_perc = 0.5;
  m.kv_internal_fragmentation_perc = 0.125;
  m.kv_reserved_unused_perc = 0.0625;
  m.attention_scratch_bytes = 7;
  m.attention_seconds = 0.03125;
  m.matmul_seconds = 0.015625;
  m.prefix_cache_queries = 8;
  m.prefix_cache_hits = 9;
  m.spec_draft_tokens = 10;
  m.spec_accepted_tokens = 11;
  m.spec_chosen_k = 2.5;
  m.draft_seconds = 0.375;
  m.verify_seconds = 0.4375;
  m.pool_dispatches = 12;
  m.flops = 13e9;
  m.weight_bytes_read = 14e6;
  m.kv_bytes_read = 15e3;
  return m;
}

TEST(StepMetricTable, MetricsJsonWritesEveryRowWithItsValue) {
  EngineMetricsSnapshot s;
  s.steps.push_back(distinct_step());
  const nlohmann::json step = metrics_json(s)["steps"][0];
  std::set<std::string> keys;
  std::set<double> values;
  for (const StepMetric& m : step_metrics_table()) {
    SCOPED_TRACE(m.key);
    EXPECT_TRUE(keys.insert(m.key).second) << "a key is declared twice";
    EXPECT_FALSE(m.help.empty());
    ASSERT_TRUE(step.contains(m.key));
    EXPECT_DOUBLE_EQ(step[m.key].get<double>(), m.value(s.steps[0]));
    EXPECT_TRUE(values.insert(m.value(s.steps[0])).second) << "two rows read the same field";
  }
  // Besides the rows: who ran in the step and who was preempted.
  EXPECT_EQ(step.size(), keys.size() + 2) << step.dump();
  EXPECT_TRUE(step["prefill_tokens"].is_number_integer());
  EXPECT_TRUE(step["spec_chosen_k"].is_number_float()) << "a mean of counts keeps its fraction";
}

// A snapshot with every field of its own value, its lists included.
EngineMetricsSnapshot distinct_snapshot() {
  EngineMetricsSnapshot s;
  s.uptime_s = 12.5;
  s.num_requests_running = 2, s.num_requests_waiting = 3, s.num_preemptions = 4, s.num_steps = 5;
  s.requests_finished = 6, s.prompt_tokens_total = 7, s.generation_tokens_total = 8;
  s.prefill_tokens_per_second = 9.5, s.decode_tokens_per_second = 10.5;
  s.weight_bytes = 11, s.conversion_progress = 0.25, s.prefix_cache_queries = 13, s.prefix_cache_hits = 14;
  s.kv = {true, 1000, 600, 70, 80, 2, 20, 9, 3, 8, 1, 64, 15, 16, 17};
  s.weights_quant = "q8", s.converting_to = "q4", s.device = "cuda:0", s.device_fallback = "none";
  s.device_memory = DeviceMemory{100, 200, 300};
  s.spec_mode = "ngram";
  s.spec.add(3, 2);
  s.spec.add(2, 0);
  StepMetrics step = distinct_step();
  step.sequences = {{4, 16, 0, 32}, {5, 0, 3, 0}};
  step.preempted = {6};
  s.steps = {step, distinct_step()};
  RequestMetrics r;
  r.id = 4, r.arrival_s = 0.5, r.request_queue_time_seconds = 0.125, r.time_to_first_token_seconds = 0.25;
  r.inter_token_latency_seconds = {0.0625, 0.03125}, r.e2e_request_latency_seconds = 1.75;
  r.prompt_tokens = 48, r.generation_tokens = 3, r.num_preemptions = 1, r.finish_reason = "length";
  r.spec.add(4, 3);
  RequestMetrics live;
  live.id = 5;
  s.requests = {r, live};
  return s;
}

// The snapshot's own numbers: --metrics-json writes each row once, with the value its getter reads.
TEST(StepMetricTable, MetricsJsonWritesEverySnapshotRow) {
  const EngineMetricsSnapshot s = distinct_snapshot();
  const nlohmann::json j = metrics_json(s);
  std::set<std::string> keys;
  for (const SnapshotMetric& m : snapshot_metrics_table()) {
    SCOPED_TRACE(m.key);
    EXPECT_TRUE(keys.insert(m.key).second) << "a key is declared twice";
    EXPECT_FALSE(m.help.empty());
    ASSERT_TRUE(j.contains(m.key));
    EXPECT_DOUBLE_EQ(j[m.key].get<double>(), m.value(s));
    if (whole_unit(m.unit)) {
      EXPECT_TRUE(j[m.key].is_number_integer());
    }
  }
  EXPECT_EQ(j["prefill_tokens_per_second"], 9.5);
  EXPECT_EQ(j["generation_tokens_total"], 8);
  // Besides the rows: the weights' level, a conversion's target, the device and its memory, fallback,
  // the cache's counts, speculation, steps and requests.
  EXPECT_EQ(j.size(), keys.size() + 10) << j.dump();
}

// metrics_from_json reads back every field metrics_json writes: the same JSON again, each table row
// into its own field (the values are distinct, so a row that filled another field would show).
TEST(MetricsJson, ReadsBackWhatItWrites) {
  const EngineMetricsSnapshot s = distinct_snapshot();
  const nlohmann::json j = metrics_json(s);
  const EngineMetricsSnapshot back = metrics_from_json(j, "snapshot");
  EXPECT_EQ(metrics_json(back), j);
  EXPECT_EQ(back.kv.blocks_cached, 3);
  EXPECT_EQ(back.steps[0].sequences[0].cached_tokens, 32);
  EXPECT_EQ(back.steps[0].preempted, std::vector<RequestId>{6});
  EXPECT_EQ(back.requests[0].inter_token_latency_seconds, s.requests[0].inter_token_latency_seconds);
  EXPECT_EQ(back.spec.num_accepted_tokens_per_pos, (std::vector<int64_t>{1, 1, 0}));
  for (const StepMetric& m : step_metrics_table()) EXPECT_EQ(m.value(back.steps[0]), m.value(s.steps[0])) << m.key;
}

TEST(MetricsJson, AMissingOrMistypedFieldIsNamed) {
  nlohmann::json j = metrics_json(distinct_snapshot());
  j["steps"][1]["duration_s"] = "slow";
  try {
    metrics_from_json(j, "http://host/inferscope/v1/metrics");
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "http://host/inferscope/v1/metrics: steps[1]: field 'duration_s' is missing or has the wrong type: \"slow\"");
  }
  j = metrics_json(distinct_snapshot());
  j["requests"][0].erase("finish_reason");
  EXPECT_THROW(metrics_from_json(j, "x"), std::runtime_error);
  j = metrics_json(distinct_snapshot());
  j["kv_stats"]["blocks_used"] = -1.5;
  EXPECT_THROW(metrics_from_json(j, "x"), std::runtime_error);
  j = metrics_json(distinct_snapshot());
  j["steps"][0]["prefill_tokens"] = 1e300;
  EXPECT_THROW(metrics_from_json(j, "x"), std::runtime_error) << "beyond an int32_t";
  EXPECT_THROW(metrics_from_json(nlohmann::json::array(), "x"), std::runtime_error);
}

TEST(StepMetricTable, EveryDrawnRowNamesItsPanelLineAndColour) {
  for (const StepMetric& m : step_metrics_table()) {
    if (m.look == MetricLook::None) continue;
    SCOPED_TRACE(m.key);
    EXPECT_FALSE(m.panel.empty());
    EXPECT_FALSE(m.line.empty());
    EXPECT_NE(m.rgb, 0u);
  }
}

TEST(MetricUnit, EachUnitReadsAsItSays) {
  EXPECT_EQ(format_metric(0.0123, MetricUnit::Seconds), "12.3 ms");
  EXPECT_EQ(format_metric(2.5e-4, MetricUnit::Seconds), "250 µs");
  EXPECT_EQ(format_metric(0.412, MetricUnit::Fraction), "41.2 %");
  EXPECT_EQ(format_metric(1.5 * (1 << 20), MetricUnit::Bytes), "1.50 MiB");
  EXPECT_EQ(format_metric(37.4e9, MetricUnit::BytesPerSecond), "37.4 GB/s");
  EXPECT_EQ(format_metric(96.4, MetricUnit::TokensPerSecond), "96.4 tok/s");
  EXPECT_EQ(format_metric(3.2, MetricUnit::PerSecond), "3.20 /s") << "a rate of anything but tokens is no tok/s";
  EXPECT_EQ(format_metric(1.2e9, MetricUnit::Flops), "1.20 GFLOP");
  EXPECT_EQ(format_metric(12.3e9, MetricUnit::FlopsPerSecond), "12.3 GFLOP/s");
  EXPECT_EQ(format_metric(37, MetricUnit::Tokens), "37");
  EXPECT_EQ(format_metric(2.5, MetricUnit::Count), "2.50");
  EXPECT_EQ(format_metric(std::nan(""), MetricUnit::Count), "-");
}

}  // namespace
}  // namespace inferscope
