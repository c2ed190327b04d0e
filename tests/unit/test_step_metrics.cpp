// The step metric table is the one description of every per-step metric: --metrics-json writes each
// row's key with the value its getter reads, and each unit formats its values as it says.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cmath>
#include <set>

#include "core/common/metric_unit.h"
#include "core/engine/engine_metrics.h"
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

// The snapshot's own numbers: --metrics-json writes each row once, with the value its getter reads.
TEST(StepMetricTable, MetricsJsonWritesEverySnapshotRow) {
  EngineMetricsSnapshot s;
  s.uptime_s = 12.5;
  s.num_requests_running = 2, s.num_requests_waiting = 3, s.num_preemptions = 4, s.num_steps = 5;
  s.requests_finished = 6, s.prompt_tokens_total = 7, s.generation_tokens_total = 8;
  s.prefill_tokens_per_second = 9.5, s.decode_tokens_per_second = 10.5;
  s.weight_bytes = 11, s.conversion_progress = 0.25, s.prefix_cache_queries = 13, s.prefix_cache_hits = 14;
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
  // speculation, steps and requests.
  EXPECT_EQ(j.size(), keys.size() + 9) << j.dump();
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
