// Each server's /metrics names mapped to the workbench's counters and gauges, on the hand-written
// scrapes of tests/fixtures/metrics; what a server does not report stays absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/remote/server_metrics.h"
#include "core/remote/scrape_history.h"
#include "core/remote/server_report.h"
#include "tests/support/metric_fixtures.h"

namespace inferscope {
namespace {

using test::metrics_fixture;

TEST(ServerMetrics, VllmSumsCountersOverEnginesAndAveragesKvUsage) {
  const MetricSnapshot first = metrics_fixture("vllm_scrape1.txt");
  const ServerCounters c = read_counters(first, ServerKind::Vllm);
  EXPECT_EQ(c.prompt_tokens, 6144);
  EXPECT_EQ(c.generation_tokens, 2400);
  EXPECT_EQ(c.steps, 344);  // the iteration histogram's count
  EXPECT_EQ(c.preemptions, 0);
  EXPECT_EQ(c.prefix_cache_queries, 6144);
  EXPECT_EQ(c.prefix_cache_hits, 1024);
  EXPECT_EQ(c.spec_drafts, 400);
  EXPECT_EQ(c.spec_draft_tokens, 1200);
  EXPECT_EQ(c.spec_accepted_tokens, 750);
  EXPECT_EQ(c.spec_accepted_per_position, (std::vector<double>{350, 300, 100}));
  const ServerGauges g = read_gauges(first, ServerKind::Vllm);
  EXPECT_EQ(g.requests_running, 5);
  EXPECT_EQ(g.requests_waiting, 1);
  EXPECT_DOUBLE_EQ(*g.kv_cache_usage, (0.125 + 0.0625) / 2);
  const std::optional<ServerKvPool> pool = read_kv_pool(first, ServerKind::Vllm);
  ASSERT_TRUE(pool.has_value());
  EXPECT_EQ(pool->block_size, 16);
  EXPECT_EQ(pool->blocks, 27834);
  EXPECT_FALSE(read_kv_pool(first, ServerKind::Sglang).has_value());
  EXPECT_FALSE(read_kv_pool(MetricSnapshot::parse("vllm:cache_config_info{block_size=\"16\",num_gpu_blocks=\"None\"} 1\n"),
                            ServerKind::Vllm).has_value());

  const ServerCounters d = counters_increase(c, read_counters(metrics_fixture("vllm_scrape2.txt"), ServerKind::Vllm));
  EXPECT_EQ(d.prompt_tokens, 24576 + 20480 - 6144);
  EXPECT_EQ(d.generation_tokens, 9500 + 7900 - 2400);
  EXPECT_EQ(d.steps, 1800 - 344);
  EXPECT_EQ(d.spec_accepted_per_position, (std::vector<double>{2050 - 350, 1700 - 300, 600 - 100}));
}

TEST(ServerMetrics, LlamaServerHasNoKvUsageOrPrefixCacheCounters) {
  const ServerCounters c = read_counters(metrics_fixture("llama_server_scrape1.txt"), ServerKind::LlamaCpp);
  EXPECT_EQ(c.prompt_tokens, 1234);
  EXPECT_EQ(c.generation_tokens, 512);
  EXPECT_EQ(c.steps, 520);
  EXPECT_FALSE(c.preemptions.has_value());
  EXPECT_FALSE(c.prefix_cache_queries.has_value());
  EXPECT_FALSE(c.spec_drafts.has_value());  // this scrape predates the spec-decode counters
  const ServerGauges g = read_gauges(metrics_fixture("llama_server_scrape1.txt"), ServerKind::LlamaCpp);
  EXPECT_EQ(g.requests_running, 1);
  EXPECT_EQ(g.requests_waiting, 0);
  EXPECT_FALSE(g.kv_cache_usage.has_value());
  const ServerCounters d = counters_increase(c, read_counters(metrics_fixture("llama_server_scrape2.txt"), ServerKind::LlamaCpp));
  EXPECT_EQ(d.prompt_tokens, 5330 - 1234);
  EXPECT_EQ(d.steps, 2590 - 520);
}

TEST(ServerMetrics, SglangReportsTokenUsageAndQueues) {
  const MetricSnapshot m = metrics_fixture("sglang_scrape1.txt");
  const ServerGauges g = read_gauges(m, ServerKind::Sglang);
  EXPECT_DOUBLE_EQ(*g.kv_cache_usage, 0.28);
  EXPECT_EQ(g.requests_running, 12);
  EXPECT_EQ(g.requests_waiting, 0);
  // Its prefix-cache and speculation figures are rates published as gauges.
  EXPECT_DOUBLE_EQ(*g.prefix_cache_hit_rate, 0.007507552643049313);
  EXPECT_DOUBLE_EQ(*g.spec_accept_rate, 0.6);
  EXPECT_DOUBLE_EQ(*g.spec_accept_length, 2.75);
  EXPECT_EQ(server_step(g, {}, 1.0, 0.5).server_spec_accept_length, 2.75);
  const ServerCounters c = read_counters(m, ServerKind::Sglang);
  EXPECT_EQ(c.prompt_tokens, 8.128902e+06);
  EXPECT_FALSE(c.steps.has_value());
  // So those panels are reported through the gauges; per draft position is not.
  const std::vector<std::string> missing = server_not_reported(g, c);
  for (const char* panel : {"prefix_cache_hit_rate", "spec_acceptance", "kv_cache_usage_perc"}) {
    EXPECT_EQ(std::find(missing.begin(), missing.end(), panel), missing.end()) << panel;
  }
  EXPECT_NE(std::find(missing.begin(), missing.end(), "spec_decode"), missing.end());
  EXPECT_EQ(server_step(g, c, 1.0, 0.5).server_prefix_hit_rate, *g.prefix_cache_hit_rate);
  // Another server's names find nothing here.
  EXPECT_FALSE(read_counters(m, ServerKind::Vllm).prompt_tokens.has_value());
}

// vLLM before 0.9.2 names KV usage gpu_cache_usage_perc, and the prefix cache gpu_prefix_cache_*;
// before 0.10.2 its inter-token latency is time_per_output_token_seconds. Those are read where the
// newer names are missing, and never beside them.
TEST(ServerMetrics, AnOlderVllmsNamesAreReadWhereTheNewerAreMissing) {
  const std::string older =
      "# TYPE vllm:gpu_cache_usage_perc gauge\n"
      "vllm:gpu_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.5\n"
      "# TYPE vllm:gpu_prefix_cache_queries_total counter\n"
      "vllm:gpu_prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 100\n"
      "# TYPE vllm:gpu_prefix_cache_hits_total counter\n"
      "vllm:gpu_prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 40\n"
      "# TYPE vllm:time_per_output_token_seconds histogram\n"
      "vllm:time_per_output_token_seconds_bucket{le=\"0.01\",model_name=\"m\"} 3\n"
      "vllm:time_per_output_token_seconds_bucket{le=\"+Inf\",model_name=\"m\"} 4\n"
      "vllm:time_per_output_token_seconds_sum{model_name=\"m\"} 0.05\n"
      "vllm:time_per_output_token_seconds_count{model_name=\"m\"} 4\n";
  const MetricSnapshot m = MetricSnapshot::parse(older);
  EXPECT_EQ(read_gauges(m, ServerKind::Vllm).kv_cache_usage, 0.5);
  const ServerCounters c = read_counters(m, ServerKind::Vllm);
  EXPECT_EQ(c.prefix_cache_queries, 100);
  EXPECT_EQ(c.prefix_cache_hits, 40);
  const std::optional<HistogramSeries> itl = read_latency_histogram(m, ServerKind::Vllm, ServerLatency::InterToken);
  ASSERT_TRUE(itl.has_value());
  EXPECT_EQ(itl->count, 4);
  // Both names (0.9.2 to 0.10): the newer one counts, once.
  const MetricSnapshot both = MetricSnapshot::parse(older +
                                                    "# TYPE vllm:kv_cache_usage_perc gauge\n"
                                                    "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.25\n");
  EXPECT_EQ(read_gauges(both, ServerKind::Vllm).kv_cache_usage, 0.25);
}

// vLLM 0.9.2 to 0.11.0 with several API servers writes kv_cache_usage_perc once per process (a `pid`
// label), the copy of a process that no longer hears from an engine stale: the deprecated
// gpu_cache_usage_perc, written once, is read while it is there; without it each engine counts once,
// its largest copy, never a mean of all copies.
TEST(ServerMetrics, AVllmGaugeCopiedPerProcessCountsEachEngineOnce) {
  const std::string copies =
      "# TYPE vllm:kv_cache_usage_perc gauge\n"
      "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\",pid=\"101\"} 0.5\n"
      "vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\",pid=\"101\"} 0.25\n"
      "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\",pid=\"102\"} 0.125\n"
      "vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\",pid=\"102\"} 0.375\n";
  EXPECT_EQ(read_gauges(MetricSnapshot::parse(copies), ServerKind::Vllm).kv_cache_usage, (0.5 + 0.375) / 2);
  const MetricSnapshot with_old_name = MetricSnapshot::parse(copies +
                                                             "# TYPE vllm:gpu_cache_usage_perc gauge\n"
                                                             "vllm:gpu_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.5\n"
                                                             "vllm:gpu_cache_usage_perc{engine=\"1\",model_name=\"m\"} 0.25\n");
  EXPECT_EQ(read_gauges(with_old_name, ServerKind::Vllm).kv_cache_usage, (0.5 + 0.25) / 2);
}

// SGLang 0.5.23 with priority scheduling writes the queue under priority="" and again per priority;
// with pipeline or tensor parallelism each rank of one engine writes its own copy. One engine's
// gauge is counted once; data-parallel engines add up.
TEST(ServerMetrics, AnSglangQueueIsCountedOncePerEngine) {
  const MetricSnapshot priorities = MetricSnapshot::parse(
      "# TYPE sglang:num_queue_reqs gauge\n"
      "sglang:num_queue_reqs{model_name=\"m\",priority=\"\"} 5\n"
      "sglang:num_queue_reqs{model_name=\"m\",priority=\"0\"} 2\n"
      "sglang:num_queue_reqs{model_name=\"m\",priority=\"1\"} 3\n");
  EXPECT_EQ(read_gauges(priorities, ServerKind::Sglang).requests_waiting, 5);
  const MetricSnapshot ranks = MetricSnapshot::parse(
      "# TYPE sglang:num_running_reqs gauge\n"
      "sglang:num_running_reqs{dp_rank=\"0\",model_name=\"m\",pp_rank=\"0\",tp_rank=\"0\"} 4\n"
      "sglang:num_running_reqs{dp_rank=\"0\",model_name=\"m\",pp_rank=\"1\",tp_rank=\"0\"} 4\n"
      "sglang:num_running_reqs{dp_rank=\"0\",model_name=\"m\",pp_rank=\"0\",tp_rank=\"1\"} 4\n"
      "sglang:num_running_reqs{dp_rank=\"1\",model_name=\"m\",pp_rank=\"0\",tp_rank=\"0\"} 3\n");
  EXPECT_EQ(read_gauges(ranks, ServerKind::Sglang).requests_running, 7) << "two engines: 4 and 3";
}

// llama-server exports its speculation counters at 0 when it runs no draft model: no acceptance to
// draw. SGLang before 0.5.4 publishes spec_accept_length without spec_accept_rate: that alone shows
// that it speculates.
TEST(ServerMetrics, SpeculationShowsByItsDraftsOrAnAcceptedLength) {
  const auto listed = [](const std::vector<std::string>& names, const char* name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  ServerCounters no_drafter;
  no_drafter.spec_drafts = no_drafter.spec_draft_tokens = no_drafter.spec_accepted_tokens = 0;
  EXPECT_TRUE(listed(server_not_reported({}, no_drafter), "spec_acceptance"));
  EXPECT_TRUE(listed(server_not_reported({}, no_drafter), "spec_decode"));
  ServerCounters drafting = no_drafter;
  drafting.spec_drafts = 3;
  drafting.spec_accepted_per_position = {2};
  EXPECT_FALSE(listed(server_not_reported({}, drafting), "spec_acceptance"));
  EXPECT_FALSE(listed(server_not_reported({}, drafting), "spec_decode"));
  ServerGauges length_only;
  length_only.spec_accept_length = 2.5;
  EXPECT_FALSE(listed(server_not_reported(length_only, {}), "spec_acceptance"));
  // The dashboard's speculation panels then name the server's speculation, not "off".
  for (const ServerScrape& scrape : {ServerScrape{.gauges = length_only}, ServerScrape{.counters = drafting}}) {
    ScrapeHistory history(10);
    EngineMetrics metrics;
    history.take(scrape, 1, metrics);
    EngineMetricsSnapshot s = metrics.snapshot(1);
    history.complete(s);
    EXPECT_EQ(s.spec_mode, "server");
  }
  ScrapeHistory history(10);
  EngineMetrics metrics;
  history.take(ServerScrape{.counters = no_drafter}, 1, metrics);
  EngineMetricsSnapshot s = metrics.snapshot(1);
  history.complete(s);
  EXPECT_EQ(s.spec_mode, "none");
}

// The latency histograms each server keeps, by their names there; llama-server keeps none.
TEST(ServerMetrics, LatencyHistogramsByServer) {
  const MetricSnapshot vllm = metrics_fixture("vllm_scrape1.txt");
  const auto count = [](const MetricSnapshot& m, ServerKind kind, ServerLatency latency) {
    const std::optional<HistogramSeries> h = read_latency_histogram(m, kind, latency);
    return h ? h->count : -1.0;
  };
  EXPECT_EQ(count(vllm, ServerKind::Vllm, ServerLatency::InterToken), 1500);
  EXPECT_EQ(count(vllm, ServerKind::Vllm, ServerLatency::EndToEnd), 20);
  EXPECT_EQ(count(vllm, ServerKind::Vllm, ServerLatency::Queue), 20);
  const MetricSnapshot sglang = metrics_fixture("sglang_scrape2.txt");
  EXPECT_EQ(count(sglang, ServerKind::Sglang, ServerLatency::InterToken), 15600);
  EXPECT_EQ(count(sglang, ServerKind::Sglang, ServerLatency::EndToEnd), 240);
  EXPECT_EQ(count(sglang, ServerKind::Sglang, ServerLatency::Queue), -1);  // not in this version's scrape
  EXPECT_EQ(count(metrics_fixture("llama_server_scrape1.txt"), ServerKind::LlamaCpp, ServerLatency::Ttft), -1);
}

TEST(ServerMetrics, ARestartedServerCountsFromZero) {
  ServerCounters before, after;
  before.prompt_tokens = 1000;
  after.prompt_tokens = 40;
  before.steps = 5;
  EXPECT_EQ(counters_increase(before, after).prompt_tokens, 40);
  EXPECT_FALSE(counters_increase(before, after).steps.has_value());
}

// What fuzz_prometheus_scrape found (tests/fuzz/regressions/fuzz_prometheus_scrape): a NaN count cast to
// an int; and what the mapping refuses by name: a metric of a type it does not read, a `position` label
// that is not a draft position (a negative one indexed far outside its vector, a huge one allocated it).
TEST(ServerMetrics, NanOrHugeCountsBecomeWholeNumbers) {
  const ServerScrape s = read_server_scrape(MetricSnapshot::parse("vllm:num_requests_running NaN\nvllm:num_requests_waiting 1e300\n"),
                                            ServerKind::Vllm);
  const StepMetrics step = server_step(s.gauges, s.counters, 1, 1);
  EXPECT_EQ(step.num_requests_running, 0);
  EXPECT_EQ(step.num_requests_waiting, std::numeric_limits<int32_t>::max());
}

TEST(ServerMetrics, MetricsItCannotReadAreNamed) {
  const auto error_of = [](const std::string& body) {
    try {
      read_server_scrape(MetricSnapshot::parse(body), ServerKind::Vllm);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string per_pos = "vllm:spec_decode_num_accepted_tokens_per_pos_total";
  EXPECT_EQ(error_of(per_pos + "{position=\"x\"} 1\n"), "metric " + per_pos + ": label position=\"x\" is not a draft position (0 to 1023)");
  EXPECT_EQ(error_of(per_pos + "{position=\"-1\"} 1\n"), "metric " + per_pos + ": label position=\"-1\" is not a draft position (0 to 1023)");
  EXPECT_EQ(error_of(per_pos + "{position=\"99999999999\"} 1\n"),
            "metric " + per_pos + ": label position=\"99999999999\" is not a draft position (0 to 1023)");
  EXPECT_EQ(error_of("# TYPE vllm:kv_cache_usage_perc histogram\nvllm:kv_cache_usage_perc_bucket{le=\"+Inf\"} 1\n"),
            "metric vllm:kv_cache_usage_perc is a histogram, not a counter, gauge or untyped metric");
  EXPECT_EQ(error_of("# TYPE vllm:prompt_tokens_total summary\nvllm:prompt_tokens_total_sum 1\n"),
            "metric vllm:prompt_tokens_total is a summary, not a counter, gauge or untyped metric");
  EXPECT_EQ(error_of("# TYPE vllm:time_to_first_token_seconds gauge\nvllm:time_to_first_token_seconds 1\n"),
            "metric vllm:time_to_first_token_seconds is a gauge, not a histogram");
}

}  // namespace
}  // namespace inferscope
