// Every release's /metrics, as generated from the servers' own code by scripts/metrics-fixtures
// (tests/fixtures/metrics/releases), read through the mapping: each quantity a panel draws equals what
// the scripted load put there (expected.json), whatever names, duplicates and copies that release writes;
// the release range the scrape's names fit holds the release.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/remote/histogram_math.h"
#include "core/remote/scrape_history.h"
#include "core/remote/server_metric_table.h"
#include "core/remote/server_metrics.h"
#include "core/remote/server_report.h"

namespace inferscope {
namespace {

namespace fs = std::filesystem;

const fs::path kReleases = fs::path(INFERSCOPE_SOURCE_DIR) / "tests/fixtures/metrics/releases";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::stringstream body;
  body << in.rdbuf();
  return body.str();
}

std::vector<std::string> release_folders() {
  std::vector<std::string> out;
  for (const fs::directory_entry& e : fs::directory_iterator(kReleases))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

ServerKind kind_of(const std::string& server) {
  if (server == "vllm") return ServerKind::Vllm;
  if (server == "sglang") return ServerKind::Sglang;
  if (server == "llama-server") return ServerKind::LlamaCpp;
  throw std::invalid_argument("expected.json: unknown server " + server);
}

// A value read against expected.json's: null (not published), a number, {"any_of": [...]} (copies the
// text cannot tell apart), or {"published": true} (the load cannot know its value).
void expect_value(const std::optional<double>& got, const nlohmann::json& want, const std::string& what) {
  SCOPED_TRACE(what);
  if (want.is_null()) {
    EXPECT_FALSE(got.has_value()) << "read " << got.value_or(0) << " where the release publishes none";
    return;
  }
  ASSERT_TRUE(got.has_value()) << "not read, expected " << want.dump();
  // expected.json rounds fractions to 6 decimals.
  const auto near = [&](double w) { return std::abs(*got - w) <= 1e-6 * std::max(1.0, std::abs(w)); };
  if (want.contains("published")) return;
  if (want.is_object()) {
    const nlohmann::json& any = want.at("any_of");
    EXPECT_TRUE(std::any_of(any.begin(), any.end(), [&](const nlohmann::json& w) { return near(w.get<double>()); }))
        << "read " << *got << ", expected one of " << any.dump();
  } else {
    EXPECT_TRUE(near(want.get<double>())) << "read " << *got << ", expected " << want.dump();
  }
}

struct Release {
  std::string folder;
  nlohmann::json expected;
  ServerKind kind = ServerKind::Unknown;
  MetricSnapshot first{{}}, second{{}};
};

Release load(const std::string& folder) {
  Release r{folder, nlohmann::json::parse(read_text(kReleases / folder / "expected.json"))};
  r.kind = kind_of(r.expected.at("server").get<std::string>());
  r.first = MetricSnapshot::parse(read_text(kReleases / folder / "scrape1.txt"));
  r.second = MetricSnapshot::parse(read_text(kReleases / folder / "scrape2.txt"));
  return r;
}

class MetricsRelease : public testing::TestWithParam<std::string> {};

TEST_P(MetricsRelease, GaugesCountOneCopyOfEachEngine) {
  const Release r = load(GetParam());
  const ServerGauges g = read_gauges(r.second, r.kind);
  const nlohmann::json& want = r.expected.at("gauges");
  expect_value(g.requests_running, want.at("requests_running"), "requests_running");
  expect_value(g.requests_waiting, want.at("requests_waiting"), "requests_waiting");
  expect_value(g.kv_cache_usage, want.at("kv_cache_usage"), "kv_cache_usage");
  expect_value(g.prefix_cache_hit_rate, want.at("prefix_cache_hit_rate"), "prefix_cache_hit_rate");
  expect_value(g.spec_accept_rate, want.at("spec_accept_rate"), "spec_accept_rate");
  expect_value(g.spec_accept_length, want.at("spec_accept_length"), "spec_accept_length");
  expect_value(g.gen_throughput, want.at("gen_throughput"), "gen_throughput");
}

TEST_P(MetricsRelease, CountersIncreaseByTheLoadBetweenScrapes) {
  const Release r = load(GetParam());
  const ServerCounters c = counters_increase(read_counters(r.first, r.kind), read_counters(r.second, r.kind));
  const nlohmann::json& want = r.expected.at("increase");
  expect_value(c.prompt_tokens, want.at("prompt_tokens"), "prompt_tokens");
  expect_value(c.prompt_tokens_cached, want.at("prompt_tokens_cached"), "prompt_tokens_cached");
  expect_value(c.generation_tokens, want.at("generation_tokens"), "generation_tokens");
  expect_value(c.steps, want.at("steps"), "steps");
  const nlohmann::json& live = want.at("live_tokens");
  const auto mode = [&](const char* m) { return live.is_null() ? nlohmann::json() : live.at(m); };
  expect_value(c.live_prompt_computed, mode("prefill_compute"), "live prefill_compute");
  expect_value(c.live_prompt_cached, mode("prefill_cache"), "live prefill_cache");
  expect_value(c.live_generated, mode("decode"), "live decode");
  expect_value(c.preemptions, want.at("preemptions"), "preemptions");
  expect_value(c.prefix_cache_queries, want.at("prefix_cache_queries"), "prefix_cache_queries");
  expect_value(c.prefix_cache_hits, want.at("prefix_cache_hits"), "prefix_cache_hits");
  expect_value(c.spec_drafts, want.at("spec_drafts"), "spec_drafts");
  expect_value(c.spec_draft_tokens, want.at("spec_draft_tokens"), "spec_draft_tokens");
  expect_value(c.spec_accepted_tokens, want.at("spec_accepted_tokens"), "spec_accepted_tokens");
  const nlohmann::json& per_position = want.at("spec_accepted_per_position");
  if (per_position.is_null()) {
    EXPECT_TRUE(c.spec_accepted_per_position.empty());
  } else {
    EXPECT_EQ(c.spec_accepted_per_position, per_position.get<std::vector<double>>());
  }
}

TEST_P(MetricsRelease, LatencyHistogramsCountEachRequestOnce) {
  const Release r = load(GetParam());
  const char* keys[] = {"ttft", "inter_token", "e2e", "queue"};
  for (size_t i = 0; i < kServerLatencies; ++i) {
    const auto latency = static_cast<ServerLatency>(i);
    const std::optional<HistogramSeries> before = read_latency_histogram(r.first, r.kind, latency);
    const std::optional<HistogramSeries> after = read_latency_histogram(r.second, r.kind, latency);
    std::optional<double> count, sum;
    if (before && after) {
      const HistogramSeries window = histogram_increase(*before, *after);
      count = window.count;
      sum = window.sum;
    }
    // null: the release keeps no latency histograms at all.
    const auto want = [&](const char* block) { return r.expected.at(block).is_null() ? nlohmann::json() : r.expected.at(block).at(keys[i]); };
    expect_value(count, want("latency_count_increase"), std::string("count of ") + keys[i]);
    expect_value(sum, want("latency_sum_increase"), std::string("sum of ") + keys[i]);
  }
}

TEST_P(MetricsRelease, TheReleaseRangeHoldsTheRelease) {
  const Release r = load(GetParam());
  const std::string release = r.expected.at("release").get<std::string>();
  const ReleaseMatch match = match_release(r.second, r.kind);
  EXPECT_NE(std::find(match.releases.begin(), match.releases.end(), release), match.releases.end())
      << release_range_text(r.kind, match) << " does not hold " << release;
  // What the release does not publish is what the load found null.
  const bool kv_unpublished = std::find(match.unpublished.begin(), match.unpublished.end(), "KV cache usage") != match.unpublished.end();
  EXPECT_EQ(kv_unpublished, r.expected.at("gauges").at("kv_cache_usage").is_null());
  const bool ttft_unpublished = std::find(match.unpublished.begin(), match.unpublished.end(), "time to first token") != match.unpublished.end();
  EXPECT_EQ(ttft_unpublished, r.expected.at("latency_count_increase").is_null() || r.expected.at("latency_count_increase").at("ttft").is_null());
}

// The dashboard's step for the interval between the scrapes: what the panels draw.
TEST_P(MetricsRelease, PanelsDrawTheLoad) {
  const Release r = load(GetParam());
  const double interval = r.expected.at("interval_s").get<double>();
  ScrapeHistory history(60);
  EngineMetrics metrics;
  history.take(read_server_scrape(r.first, r.kind), 0, metrics);
  history.take(read_server_scrape(r.second, r.kind), interval, metrics);
  EngineMetricsSnapshot s = metrics.snapshot(interval);
  history.complete(s);
  ASSERT_EQ(s.steps.size(), 1u);
  const StepMetrics& step = s.steps.back();
  const nlohmann::json& gauges = r.expected.at("gauges");
  const nlohmann::json& increase = r.expected.at("increase");
  const auto whole = [](const nlohmann::json& v) { return v.is_number() ? static_cast<int32_t>(std::llround(v.get<double>())) : 0; };
  EXPECT_EQ(step.num_requests_running, whole(gauges.at("requests_running")));
  EXPECT_EQ(step.num_requests_waiting, whole(gauges.at("requests_waiting")));
  // Prompt tokens found in a cache drawn apart from those computed, whichever the server's counter holds.
  const nlohmann::json& cached_json = increase.at("prompt_tokens_cached").is_number() ? increase.at("prompt_tokens_cached")
                                                                                        : increase.at("prefix_cache_hits");
  const int32_t cached = whole(cached_json);
  const int32_t prompt = whole(increase.at("prompt_tokens"));
  const nlohmann::json& live = increase.at("live_tokens");
  if (live.is_object()) {  // counted as they are computed
    EXPECT_EQ(step.prefix_cache_hits, whole(live.at("prefill_cache")));
    EXPECT_EQ(step.prefill_tokens, whole(live.at("prefill_compute")));
  } else {
    EXPECT_EQ(step.prefix_cache_hits, cached);
    EXPECT_EQ(step.prefill_tokens, r.kind == ServerKind::LlamaCpp ? prompt : std::max(prompt - cached, 0));
  }
  // Generated tokens: the live counters' or the live gauge's where the server has them; spread over the requests' generation
  // time where its counter moves at request end (never more than it counted); else the counter's.
  const std::vector<std::string> at_end = r.expected.at("counted_at_request_end").get<std::vector<std::string>>();
  const bool generation_at_end = std::find(at_end.begin(), at_end.end(), "generation_tokens") != at_end.end();
  if (live.is_object()) {
    EXPECT_EQ(step.decode_tokens, whole(live.at("decode")));
    EXPECT_EQ(s.throughput_basis, "its live token counters");
  } else if (gauges.at("gen_throughput").is_number()) {
    EXPECT_EQ(step.decode_tokens, static_cast<int32_t>(std::llround(gauges.at("gen_throughput").get<double>() * interval)));
    EXPECT_EQ(s.throughput_basis, "its live gauge");
  } else if (generation_at_end) {
    EXPECT_LE(step.decode_tokens, whole(increase.at("generation_tokens")));
    EXPECT_EQ(s.throughput_basis, "counted at request end, spread");
  } else {
    EXPECT_EQ(step.decode_tokens, whole(increase.at("generation_tokens")));
    EXPECT_EQ(s.throughput_basis, "");
  }
  // The bars of each scrape interval are drawn; the interval is no engine step's time.
  const auto listed = [&](const char* key) { return std::find(s.not_reported.begin(), s.not_reported.end(), key) != s.not_reported.end(); };
  EXPECT_FALSE(listed("tokens_per_step"));
  EXPECT_TRUE(listed("duration_s"));
  const bool kv_missing = listed("kv_cache_usage_perc");
  EXPECT_EQ(kv_missing, gauges.at("kv_cache_usage").is_null());
  EXPECT_NE(s.source_release.find(r.expected.at("release").get<std::string>()), std::string::npos) << s.source_release;
}

INSTANTIATE_TEST_SUITE_P(Generated, MetricsRelease, testing::ValuesIn(release_folders()), [](const auto& folder) {
  std::string name = folder.param;
  std::replace_if(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) == 0; }, '_');
  return name;
});

}  // namespace
}  // namespace inferscope
