// The Prometheus text format parser (0.0.4), MetricSnapshot lookups, and scrape-to-scrape rates and
// histogram percentiles on hand-written vLLM, SGLang and llama-server bodies (tests/fixtures/metrics).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/remote/histogram_math.h"
#include "core/remote/metric_snapshot.h"
#include "core/remote/prometheus_text.h"
#include "tests/support/metric_fixtures.h"

namespace inferscope {
namespace {

std::string parse_error(const std::string& body) {
  try {
    parse_prometheus_text(body);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

using test::metrics_fixture;

TEST(PrometheusText, HelpTypeAndSamplesWithLabelsAndTimestamps) {
  const auto families = parse_prometheus_text(
      "# HELP http_requests_total The total number of HTTP requests.\n"
      "# TYPE http_requests_total counter\n"
      "http_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
      "http_requests_total{method=\"post\",code=\"400\"}    3   1395066363000\n"
      "\n"
      "# A normal comment, ignored.\n"
      "#\n"
      "metric_without_timestamp_and_labels 12.47\n");
  ASSERT_EQ(families.size(), 2u);
  EXPECT_EQ(families[0].name, "http_requests_total");
  EXPECT_EQ(families[0].help, "The total number of HTTP requests.");
  EXPECT_EQ(families[0].type, MetricType::Counter);
  ASSERT_EQ(families[0].samples.size(), 2u);
  EXPECT_EQ(families[0].samples[1].labels, (Labels{{"method", "post"}, {"code", "400"}}));
  EXPECT_EQ(families[0].samples[1].value, 3);
  EXPECT_EQ(families[0].samples[1].timestamp_ms, 1395066363000);
  EXPECT_EQ(families[1].name, "metric_without_timestamp_and_labels");
  EXPECT_EQ(families[1].type, MetricType::Untyped);
  EXPECT_EQ(families[1].samples[0].value, 12.47);
  EXPECT_EQ(families[1].samples[0].timestamp_ms, std::nullopt);
}

TEST(PrometheusText, EscapesInLabelValuesAndHelp) {
  const auto families = parse_prometheus_text(
      "# HELP msdos_file_access_time_seconds Path \\\\ and\\nnewline, \"quotes\" kept.\n"
      "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e9\n");
  EXPECT_EQ(families[0].help, "Path \\ and\nnewline, \"quotes\" kept.");
  EXPECT_EQ(families[0].samples[0].labels.at("path"), "C:\\DIR\\FILE.TXT");
  EXPECT_EQ(families[0].samples[0].labels.at("error"), "Cannot find file:\n\"FILE.TXT\"");
  EXPECT_EQ(families[0].samples[0].value, 1.458255915e9);
}

TEST(PrometheusText, SpecialValuesExponentsAndLabelSpacing) {
  const auto families = parse_prometheus_text(
      "a NaN\nb +Inf\nc -Inf\nd 1.5e-3\ne -2E+2\nf +7\ng{ x = \"1\" , y=\"2\", } 0\n");
  EXPECT_TRUE(std::isnan(families[0].samples[0].value));
  EXPECT_EQ(families[1].samples[0].value, INFINITY);
  EXPECT_EQ(families[2].samples[0].value, -INFINITY);
  EXPECT_EQ(families[3].samples[0].value, 1.5e-3);
  EXPECT_EQ(families[4].samples[0].value, -200);
  EXPECT_EQ(families[5].samples[0].value, 7);
  EXPECT_EQ(families[6].samples[0].labels, (Labels{{"x", "1"}, {"y", "2"}}));
}

TEST(PrometheusText, HistogramGroupedPerLabelSetWithBucketsSorted) {
  const auto families = parse_prometheus_text(
      "# TYPE rpc_seconds histogram\n"
      "rpc_seconds_bucket{op=\"get\",le=\"+Inf\"} 10\n"
      "rpc_seconds_bucket{op=\"get\",le=\"0.5\"} 7\n"
      "rpc_seconds_bucket{op=\"get\",le=\"0.1\"} 2\n"
      "rpc_seconds_sum{op=\"get\"} 3.5\n"
      "rpc_seconds_count{op=\"get\"} 10\n"
      "rpc_seconds_bucket{le=\"1e-1\",op=\"put\"} 1\n"
      "rpc_seconds_bucket{le=\"+Inf\",op=\"put\"} 4\n");
  ASSERT_EQ(families.size(), 1u);
  const auto& h = families[0].histograms;
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0].labels, (Labels{{"op", "get"}}));
  ASSERT_EQ(h[0].buckets.size(), 3u);
  EXPECT_EQ(h[0].buckets[0].upper_bound, 0.1);
  EXPECT_EQ(h[0].buckets[0].cumulative_count, 2);
  EXPECT_EQ(h[0].buckets[1].upper_bound, 0.5);
  EXPECT_EQ(h[0].buckets[2].upper_bound, INFINITY);
  EXPECT_EQ(h[0].sum, 3.5);
  EXPECT_EQ(h[0].count, 10);
  EXPECT_EQ(h[1].labels, (Labels{{"op", "put"}}));
  EXPECT_EQ(h[1].count, 4) << "without a _count line, the +Inf bucket's count";
  EXPECT_TRUE(std::isnan(h[1].sum)) << "without a _sum line";
}

TEST(PrometheusText, Summary) {
  const auto families = parse_prometheus_text(
      "# TYPE rpc_duration_seconds summary\n"
      "rpc_duration_seconds{quantile=\"0.99\"} 76656\n"
      "rpc_duration_seconds{quantile=\"0.01\"} 3102\n"
      "rpc_duration_seconds{quantile=\"0.5\"} 4773\n"
      "rpc_duration_seconds_sum 1.7560473e+07\n"
      "rpc_duration_seconds_count 2693\n");
  ASSERT_EQ(families[0].summaries.size(), 1u);
  const SummarySeries& s = families[0].summaries[0];
  ASSERT_EQ(s.quantiles.size(), 3u);
  EXPECT_EQ(s.quantiles[0].quantile, 0.01);
  EXPECT_EQ(s.quantiles[2].value, 76656);
  EXPECT_EQ(s.sum, 1.7560473e+07);
  EXPECT_EQ(s.count, 2693);
}

TEST(PrometheusText, CreatedCompanionsAreSkippedButOtherCreatedNamesAreNot) {
  const auto families = parse_prometheus_text(
      "# TYPE jobs_total counter\njobs_total 5\n# TYPE jobs_created gauge\njobs_created 1.7e9\n"
      "# TYPE lat histogram\nlat_bucket{le=\"+Inf\"} 1\nlat_created 1.7e9\n"
      "files_created 3\n");
  ASSERT_EQ(families.size(), 3u);
  EXPECT_EQ(families[0].name, "jobs_total");
  EXPECT_EQ(families[1].name, "lat");
  EXPECT_EQ(families[2].name, "files_created") << "no files counter beside it: a metric of its own";
}

TEST(PrometheusText, EmptyBodyHasNoFamilies) { EXPECT_TRUE(parse_prometheus_text("").empty()); }

TEST(PrometheusText, ErrorsNameTheLineAndTheProblem) {
  EXPECT_EQ(parse_error("ok 1\n1abc 3\n"), "metrics line 2: expected a metric name: 1abc 3");
  EXPECT_EQ(parse_error("m\n"), "metrics line 1: no value after m: m");
  EXPECT_EQ(parse_error("m-x 1\n"), "metrics line 1: invalid character in m: m-x 1");
  EXPECT_EQ(parse_error("m abc\n"), "metrics line 1: invalid value 'abc': m abc");
  EXPECT_EQ(parse_error("m 1 12x\n"), "metrics line 1: invalid timestamp '12x': m 1 12x");
  EXPECT_EQ(parse_error("m 1 2 3\n"), "metrics line 1: unexpected text after the timestamp: m 1 2 3");
  EXPECT_EQ(parse_error("m{a=\"x\"\n"), "metrics line 1: expected ',' or '}' after the value of label 'a': m{a=\"x\"");
  EXPECT_EQ(parse_error("m{a=\"x} 1\n"), "metrics line 1: label value is not closed with '\"': m{a=\"x} 1");
  EXPECT_EQ(parse_error("m{a=x} 1\n"), "metrics line 1: expected '\"' to open the value of label 'a': m{a=x} 1");
  EXPECT_EQ(parse_error("m{a} 1\n"), "metrics line 1: expected '=' after label name 'a': m{a} 1");
  EXPECT_EQ(parse_error("m{9=\"x\"} 1\n"), "metrics line 1: expected a label name: m{9=\"x\"} 1");
  EXPECT_EQ(parse_error("m{a=\"\\q\"} 1\n"), "metrics line 1: invalid escape \\q: m{a=\"\\q\"} 1");
  EXPECT_EQ(parse_error("m{a=\"1\",a=\"2\"} 1\n"), "metrics line 1: label 'a' appears twice: m{a=\"1\",a=\"2\"} 1");
  EXPECT_EQ(parse_error("# HELP m trailing \\\n"), "metrics line 1: escape at the end of the line: # HELP m trailing \\");
  EXPECT_EQ(parse_error("# TYPE m histo\n"), "metrics line 1: unknown metric type 'histo': # TYPE m histo");
  EXPECT_EQ(parse_error("# TYPE\n"), "metrics line 1: expected a metric name after TYPE: # TYPE");
  EXPECT_EQ(parse_error("# TYPE m gauge\n# TYPE m counter\n"), "metrics line 2: second TYPE line for m: # TYPE m counter");
  EXPECT_EQ(parse_error("m 1\n# TYPE m gauge\n"), "metrics line 2: TYPE line for m after its samples: # TYPE m gauge");
  EXPECT_EQ(parse_error("# HELP m a\n# HELP m b\n"), "metrics line 2: second HELP line for m: # HELP m b");
}

TEST(PrometheusText, HistogramErrors) {
  const std::string type = "# TYPE h histogram\n";
  EXPECT_EQ(parse_error(type + "h_bucket 1\n"), "metrics line 2: no le label on a histogram line: h_bucket 1");
  EXPECT_EQ(parse_error(type + "h_bucket{le=\"big\"} 1\n"), "metrics line 2: invalid le value 'big': h_bucket{le=\"big\"} 1");
  EXPECT_EQ(parse_error(type + "h_bucket{le=\"1\"} 1\nh_bucket{le=\"1.0\"} 1\n"),
            "metrics line 3: second bucket le=\"1.0\" for h: h_bucket{le=\"1.0\"} 1");
  EXPECT_EQ(parse_error(type + "h 1\n"), "metrics line 2: histogram h sample without a _bucket, _sum or _count suffix: h 1");
  EXPECT_EQ(parse_error(type + "h_bucket{a=\"x\",le=\"1\"} 1\nh_sum{a=\"x\"} 1\n"), "metrics line 2: histogram h{a=\"x\"} has no le=\"+Inf\" bucket");
  EXPECT_EQ(parse_error("# TYPE s summary\ns 1\n"), "metrics line 2: no quantile label on a summary line: s 1");
}

TEST(PrometheusText, TruncatedBodyIsReportedNotTakenAsASample) {
  // Cut inside a value: "1" of "12" would otherwise read as a valid sample.
  EXPECT_EQ(parse_error("# TYPE m gauge\nm{a=\"b\"} 1"),
            "metrics line 2: the body ends without a newline, so its last line may be cut short: m{a=\"b\"} 1");
  EXPECT_EQ(parse_error("m 1\nm{a=\"b"), "metrics line 2: the body ends without a newline, so its last line may be cut short: m{a=\"b");
}

TEST(MetricSnapshot, WrongKindOfFamilyIsAClearError) {
  const MetricSnapshot s = MetricSnapshot::parse("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\ng 2\n");
  EXPECT_THROW(s.sum("h"), std::invalid_argument);
  EXPECT_THROW(s.histogram("g"), std::invalid_argument);
  EXPECT_EQ(s.sum("absent"), std::nullopt);
  EXPECT_EQ(s.sum("g", {{"no", "match"}}), std::nullopt);
}

TEST(HistogramMath, QuantileInterpolatesInsideTheBucket) {
  // 10 observations: 2 in (0, 1], 6 in (1, 2], 2 above 2.
  const HistogramSeries h{{}, {{1, 2}, {2, 8}, {INFINITY, 10}}, 0, 10};
  EXPECT_DOUBLE_EQ(histogram_quantile(0.1, h), 0.5);   // rank 1 of 2 in (0, 1]
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, h), 1.5);   // rank 5: 3 of 6 into (1, 2]
  EXPECT_DOUBLE_EQ(histogram_quantile(0.95, h), 2.0);  // rank 9.5 is in the +Inf bucket: highest finite bound
  EXPECT_EQ(histogram_quantile(-0.1, h), -INFINITY);
  EXPECT_EQ(histogram_quantile(1.1, h), INFINITY);
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, HistogramSeries{{}, {{1, 0}, {INFINITY, 0}}, 0, 0})));
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, HistogramSeries{{}, {{INFINITY, 3}}, 0, 3})));
}

TEST(HistogramMath, CounterResetCountsTheWholeLaterValue) {
  EXPECT_EQ(counter_increase(100, 130), 30);
  EXPECT_EQ(counter_increase(100, 30), 30);
  const MetricSnapshot before = MetricSnapshot::parse("# TYPE c counter\nc{s=\"a\"} 100\nc{s=\"b\"} 5\n");
  const MetricSnapshot after = MetricSnapshot::parse("# TYPE c counter\nc{s=\"a\"} 30\nc{s=\"b\"} 25\nc{s=\"new\"} 10\n");
  // a reset: +30; b: +20; new since the first scrape: +10; over 2 s.
  EXPECT_DOUBLE_EQ(*counter_rate(before, 100.0, after, 102.0, "c"), 30.0);
  EXPECT_THROW(counter_rate(before, 5.0, after, 5.0, "c"), std::invalid_argument);
  EXPECT_EQ(counter_rate(before, 0, after, 1, "missing"), std::nullopt);
}

TEST(HistogramMath, IncreaseNeedsTheSameBounds) {
  const HistogramSeries a{{}, {{1, 1}, {INFINITY, 2}}, 1, 2};
  const HistogramSeries b{{}, {{2, 1}, {INFINITY, 2}}, 1, 2};
  EXPECT_THROW(histogram_increase(a, b), std::invalid_argument);
}

TEST(MetricFixtures, VllmGaugesCountersAndLabels) {
  const MetricSnapshot s = metrics_fixture("vllm_scrape2.txt");
  EXPECT_EQ(s.sum("vllm:num_requests_running"), 9.0);  // engine 0: 4, engine 1: 5
  EXPECT_EQ(s.sum("vllm:num_requests_running", {{"engine", "0"}}), 4.0);
  EXPECT_EQ(s.sum("vllm:num_requests_waiting"), 8.0);
  EXPECT_EQ(s.sum("vllm:kv_cache_usage_perc", {{"engine", "0"}}), 0.6875);
  EXPECT_EQ(s.sum("vllm:num_preemptions_total"), 2.0);
  EXPECT_EQ(s.sum("vllm:spec_decode_num_accepted_tokens_per_pos_total", {{"position", "1"}}), 1700.0);
  const MetricFamily* info = s.find("vllm:cache_config_info");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->samples.at(0).labels.at("num_gpu_blocks"), "27834");
  EXPECT_EQ(info->samples.at(0).labels.at("block_size"), "16");
  EXPECT_EQ(s.find("vllm:prompt_tokens_created"), nullptr);
  EXPECT_EQ(s.find("vllm:time_to_first_token_seconds")->type, MetricType::Histogram);
}

TEST(MetricFixtures, VllmRatesBetweenScrapes) {
  const MetricSnapshot a = metrics_fixture("vllm_scrape1.txt");
  const MetricSnapshot b = metrics_fixture("vllm_scrape2.txt");
  // Generation tokens: engine 0 1500 -> 9500, engine 1 900 -> 7900: 15000 in 10 s.
  EXPECT_DOUBLE_EQ(*counter_rate(a, 50.0, b, 60.0, "vllm:generation_tokens_total"), 1500.0);
  // Prefix cache over the interval: hits (13312-1024)+(8192-0) = 20480 of queries (24576-4096)+(20480-2048) = 38912.
  const double hits = *counter_rate(a, 0, b, 1, "vllm:prefix_cache_hits_total");
  const double queries = *counter_rate(a, 0, b, 1, "vllm:prefix_cache_queries_total");
  EXPECT_DOUBLE_EQ(hits / queries, 20480.0 / 38912.0);
  // Acceptance at draft position 0: (2050-350) accepted of (2400-400) drafts.
  const double accepted0 = *counter_rate(a, 0, b, 1, "vllm:spec_decode_num_accepted_tokens_per_pos_total", {{"position", "0"}});
  const double drafts = *counter_rate(a, 0, b, 1, "vllm:spec_decode_num_drafts_total");
  EXPECT_DOUBLE_EQ(accepted0 / drafts, 0.85);
}

TEST(MetricFixtures, VllmTtftPercentilesFromBucketIncreases) {
  const auto ttft = histogram_increase(metrics_fixture("vllm_scrape1.txt"), metrics_fixture("vllm_scrape2.txt"), "vllm:time_to_first_token_seconds");
  ASSERT_TRUE(ttft.has_value());
  // Cumulative increases: le 0.02: 4, 0.04: 20, 0.06: 44, 0.08: 56, 0.1: 64, 0.25: 76, 0.5 and above: 80.
  EXPECT_DOUBLE_EQ(ttft->count, 80);
  EXPECT_NEAR(ttft->sum, 5.2, 1e-12);
  // p50: rank 40 is in (0.04, 0.06], which holds 44-20 = 24, 20 of them up to the rank: 0.04 + 0.02*20/24.
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, *ttft), 0.04 + 0.02 * 20.0 / 24.0);
  // p90: rank 72 is in (0.1, 0.25], which holds 76-64 = 12, 8 of them up to the rank: 0.1 + 0.15*8/12 = 0.2.
  EXPECT_DOUBLE_EQ(histogram_quantile(0.9, *ttft), 0.1 + 0.15 * 8.0 / 12.0);
}

TEST(MetricFixtures, SglangGaugesRatesAndTtft) {
  const MetricSnapshot a = metrics_fixture("sglang_scrape1.txt");
  const MetricSnapshot b = metrics_fixture("sglang_scrape2.txt");
  EXPECT_EQ(b.sum("sglang:token_usage"), 0.41);
  EXPECT_EQ(b.sum("sglang:num_running_reqs"), 16.0);
  EXPECT_EQ(b.sum("sglang:num_queue_reqs"), 3.0);
  EXPECT_EQ(b.sum("sglang:spec_accept_length"), 3.125);
  EXPECT_EQ(a.sum("sglang:prompt_tokens_total", {{"model_name", "Qwen/Qwen3-8B"}}), 8.128902e+06);
  // 7.561668e6 - 7.557572e6 = 4096 tokens in 8 s.
  EXPECT_DOUBLE_EQ(*counter_rate(a, 0, b, 8, "sglang:generation_tokens_total"), 512.0);
  const auto ttft = histogram_increase(a, b, "sglang:time_to_first_token_seconds");
  ASSERT_TRUE(ttft.has_value());
  // Increases: le 0.1: 20, 0.2: 60, 0.4: 100, 0.6: 120, 0.8: 130, 1.0 and above: 140.
  // p50: rank 70 in (0.2, 0.4] holding 40, 10 up to the rank: 0.25. p90: rank 126 in (0.6, 0.8] holding 10, 6 up to it: 0.72.
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, *ttft), 0.25);
  EXPECT_DOUBLE_EQ(histogram_quantile(0.9, *ttft), 0.6 + 0.2 * 6.0 / 10.0);
}

TEST(MetricFixtures, LlamaServerThroughputFromCounters) {
  const MetricSnapshot a = metrics_fixture("llama_server_scrape1.txt");
  const MetricSnapshot b = metrics_fixture("llama_server_scrape2.txt");
  EXPECT_EQ(b.sum("llamacpp:requests_processing"), 2.0);
  EXPECT_EQ(b.sum("llamacpp:requests_deferred"), 1.0);
  EXPECT_EQ(b.sum("llamacpp:n_decode_total"), 2590.0);
  // Generation speed over the interval: (2560-512) tokens in (40.5-8.5) s of generation = 64 tokens/s.
  const double tokens = *counter_rate(a, 0, b, 1, "llamacpp:tokens_predicted_total");
  const double seconds = *counter_rate(a, 0, b, 1, "llamacpp:tokens_predicted_seconds_total");
  EXPECT_DOUBLE_EQ(tokens / seconds, 64.0);
}

}  // namespace
}  // namespace inferscope
