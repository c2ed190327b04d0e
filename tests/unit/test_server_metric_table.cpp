// The table of each server's metric names by release: release order, newest names first, and which
// known releases a scrape's names fit (the releases' own scrapes are tests/unit/test_metrics_releases).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/remote/server_metric_table.h"

namespace inferscope {
namespace {

MetricSnapshot scrape_of(const std::vector<std::string>& gauges) {
  std::string body;
  for (const std::string& name : gauges) body += "# TYPE " + name + " gauge\n" + name + " 1\n";
  return MetricSnapshot::parse(body);
}

TEST(ServerMetricTable, ReleasesCompareByTheirNumbers) {
  EXPECT_LT(compare_releases("0.9.2", "0.10.1.1"), 0);
  EXPECT_LT(compare_releases("0.10.1.1", "0.10.2"), 0);
  EXPECT_EQ(compare_releases("0.11.0", "0.11.0"), 0);
  EXPECT_GT(compare_releases("0.34.0", "0.12.0"), 0);
  EXPECT_GT(compare_releases("0.4.10.post2", "0.4.10"), 0);
  EXPECT_LT(compare_releases("0.4.10.post2", "0.5.3"), 0);
}

// "" since: before every release; "" until: after every release.
bool starts_later(std::string_view a, std::string_view b) { return !a.empty() && (b.empty() || compare_releases(a, b) >= 0); }
bool ends_later(std::string_view a, std::string_view b) { return a.empty() || (!b.empty() && compare_releases(a, b) >= 0); }

TEST(ServerMetricTable, EachQuantitysNewestNameComesFirst) {
  const std::span<const MetricRow> rows = metric_rows();
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = i + 1; j < rows.size(); ++j) {
      const MetricRow &a = rows[i], &b = rows[j];
      if (a.server != b.server || a.quantity != b.quantity) continue;
      EXPECT_TRUE(ends_later(a.until, b.until) && (a.since == b.since || starts_later(a.since, b.since)))
          << a.name << " is listed before " << b.name << " but is not the newer";
    }
  }
  EXPECT_EQ(metric_names(ServerKind::Vllm, ServerQuantity::KvCacheUsage),
            (std::vector<std::string_view>{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}));
  EXPECT_EQ(metric_names(ServerKind::Vllm, ServerQuantity::InterTokenLatency),
            (std::vector<std::string_view>{"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"}));
  EXPECT_EQ(metric_names(ServerKind::Inferscope, ServerQuantity::Steps), (std::vector<std::string_view>{"inferscope:steps_total"}));
  EXPECT_EQ(metric_names(ServerKind::Inferscope, ServerQuantity::RequestsRunning),
            metric_names(ServerKind::Vllm, ServerQuantity::RequestsRunning));
}

// Every name `release` exports by default, as a scrape.
MetricSnapshot scrape_of_release(ServerKind kind, std::string_view release) {
  std::vector<std::string> names;
  for (const MetricRow& row : metric_rows()) {
    const bool exported = (row.since.empty() || compare_releases(row.since, release) <= 0) &&
                          (row.until.empty() || compare_releases(release, row.until) <= 0);
    if (row.server == kind && exported && !row.on_demand) names.emplace_back(row.name);
  }
  return scrape_of(names);
}

TEST(ServerMetricTable, EachKnownReleasesNamesFitIt) {
  for (ServerKind kind : {ServerKind::Vllm, ServerKind::Sglang, ServerKind::LlamaCpp}) {
    for (std::string_view release : known_releases(kind)) {
      const ReleaseMatch match = match_release(scrape_of_release(kind, release), kind);
      EXPECT_NE(std::find(match.releases.begin(), match.releases.end(), release), match.releases.end())
          << server_kind_name(kind) << " " << release << " read as " << release_range_text(kind, match);
    }
  }
  EXPECT_EQ(release_range_text(ServerKind::Vllm, match_release(scrape_of_release(ServerKind::Vllm, "0.10.1.1"), ServerKind::Vllm)),
            "vLLM 0.9.2 to 0.10.1.1");
}

TEST(ServerMetricTable, NamesNoReleaseWroteTogetherFitNone) {
  const ReleaseMatch match = match_release(scrape_of({"vllm:kv_cache_usage_perc"}), ServerKind::Vllm);
  EXPECT_TRUE(match.releases.empty());
  EXPECT_EQ(release_range_text(ServerKind::Vllm, match), "no vLLM release checked (0.9.1 to 0.34.0)");
}

TEST(ServerMetricTable, WhatAServerDoesNotPublishIsNamed) {
  const ReleaseMatch match = match_release(scrape_of({"llamacpp:requests_processing", "llamacpp:requests_deferred"}), ServerKind::LlamaCpp);
  const std::string text = unpublished_text(match);
  EXPECT_NE(text.find("KV cache usage"), std::string::npos) << text;
  EXPECT_NE(text.find("time to first token"), std::string::npos) << text;
  EXPECT_EQ(text.find("running requests"), std::string::npos) << text;
  EXPECT_EQ(release_range_text(ServerKind::Unknown, match), "");
}

}  // namespace
}  // namespace inferscope
