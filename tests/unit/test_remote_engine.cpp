// The remote server as an engine front end, against a scripted local server: callbacks as the local
// Engine gives them, token counts from usage, /metrics folded into steps and totals, the panels a
// server cannot fill named, cancel and failures.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "core/remote/remote_engine.h"
#include "tests/support/canned_http_server.h"

namespace inferscope {
namespace {

using test::CannedHttpServer;
using test::CannedRequest;
using test::CannedResponse;

CannedResponse sse(const std::vector<std::string>& events, bool hold = false) {
  CannedResponse r = test::canned_sse(events);
  r.hold_until_client_closes = hold;
  return r;
}

// A llama-server whose counters grow by 10 prompt and 5 generated tokens per scrape.
CannedResponse llama_metrics(int scrape) {
  return test::canned("# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total " + std::to_string(10 * scrape) +
                    "\n# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total " + std::to_string(5 * scrape) +
                    "\n# TYPE llamacpp:n_decode_total counter\nllamacpp:n_decode_total " + std::to_string(3 * scrape) +
                    "\n# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 2\n",
                200, "text/plain");
}

// Collects the callbacks; wait() until a request finished.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::string text;
  std::vector<TokenId> tokens;
  std::string error;
  std::optional<StopReason> reason;
  std::pair<int32_t, int32_t> usage{-1, -1};

  EngineCallbacks callbacks() {
    EngineCallbacks cb;
    cb.on_token = [this](RequestId, std::string_view piece, TokenId token, const TokenTiming& t) {
      std::lock_guard lock(mu);
      EXPECT_GE(t.since_arrival_s, 0);
      text += piece;
      tokens.push_back(token);
    };
    cb.on_usage = [this](RequestId, int32_t prompt, int32_t generated) {
      std::lock_guard lock(mu);
      usage = {prompt, generated};
    };
    cb.on_error = [this](RequestId, const std::string& message) {
      std::lock_guard lock(mu);
      error = message;
    };
    cb.on_finished = [this](RequestId, StopReason r) {
      std::lock_guard lock(mu);
      reason = r;
      cv.notify_all();
    };
    return cb;
  }
  bool has_text() {
    std::lock_guard lock(mu);
    return !text.empty();
  }
  StopReason wait() {
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [this] { return reason.has_value(); }));
    return reason.value_or(StopReason::Failed);
  }
};

EngineRequest chat(const std::string& text) {
  EngineRequest r;
  r.messages = {{"user", text}};
  r.max_tokens = 8;
  return r;
}

ServerInfo llama_info() {
  ServerInfo info;
  info.kind = ServerKind::LlamaCpp;
  return info;
}

TEST(RemoteEngine, StreamsAChatAndCountsTokensFromUsage) {
  std::atomic<int> scrapes{0};
  CannedHttpServer server([&](const CannedRequest& r) {
    if (r.path == "/metrics") return llama_metrics(++scrapes);
    return sse({R"({"choices":[{"index":0,"delta":{"content":"Par"}}]})", R"({"choices":[{"index":0,"delta":{"content":"is."}}]})",
                R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
                R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3}})", "[DONE]"});
  });
  Recorder rec;
  RemoteEngineOptions options;
  options.metrics_interval_s = 0.05;
  RemoteEngine engine(make_endpoint(server.url(), "", "smollm"), llama_info(), rec.callbacks(), options);
  engine.submit(chat("capital of France?"));
  EXPECT_EQ(rec.wait(), StopReason::EndOfGeneration);
  EXPECT_EQ(rec.text, "Paris.");
  EXPECT_EQ(rec.tokens, (std::vector<TokenId>{kRemoteChunk, kRemoteChunk}));  // servers stream text, not ids
  EXPECT_EQ(rec.usage, (std::pair<int32_t, int32_t>{12, 3}));
  while (scrapes < 3) std::this_thread::sleep_for(std::chrono::milliseconds(10));

  const EngineMetricsSnapshot s = engine.metrics_snapshot();
  EXPECT_EQ(s.source, "llama.cpp at " + server.url());
  ASSERT_FALSE(s.requests.empty());
  const RequestMetrics& m = s.requests.front();
  EXPECT_EQ(m.generation_tokens, 3);  // usage, not the two chunks
  EXPECT_EQ(m.prompt_tokens, 12);
  EXPECT_EQ(m.finish_reason, "stop");
  EXPECT_GT(m.time_to_first_token_seconds, 0);
  // Every scrape after the first is an interval of the server's counters.
  ASSERT_FALSE(s.steps.empty());
  EXPECT_EQ(s.steps.back().decode_tokens, 5);
  EXPECT_EQ(s.steps.back().prefill_tokens, 10);
  EXPECT_EQ(s.num_requests_running, 2);
  EXPECT_GT(s.generation_tokens_total, 0);
  EXPECT_EQ(s.generation_tokens_total % 5, 0);  // the server's counter since connecting
  // llama-server reports no KV usage, prefix cache or speculation counters here.
  for (const char* panel : {"kv_cache_usage_perc", "prefix_cache_hit_rate", "spec_acceptance", "attention_seconds", "roofline"}) {
    EXPECT_NE(std::find(s.not_reported.begin(), s.not_reported.end(), panel), s.not_reported.end()) << panel;
  }
  EXPECT_EQ(std::find(s.not_reported.begin(), s.not_reported.end(), "decode_tokens_per_second"), s.not_reported.end());
}

// A vLLM whose TTFT histogram gains one observation under 0.1 s and one in (0.1, 0.5] per scrape,
// and its inter-token latency histogram four in (0.01, 0.02].
CannedResponse vllm_metrics(int scrape) {
  const std::string n = std::to_string(scrape), twice = std::to_string(2 * scrape);
  return test::canned("# TYPE vllm:time_to_first_token_seconds histogram\n"
                      "vllm:time_to_first_token_seconds_bucket{le=\"0.1\"} " + n + "\n"
                      "vllm:time_to_first_token_seconds_bucket{le=\"0.5\"} " + twice + "\n"
                      "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\"} " + twice + "\n"
                      "vllm:time_to_first_token_seconds_count " + twice + "\n"
                      "# TYPE vllm:inter_token_latency_seconds histogram\n"
                      "vllm:inter_token_latency_seconds_bucket{le=\"0.01\"} 0\n"
                      "vllm:inter_token_latency_seconds_bucket{le=\"0.02\"} " + std::to_string(4 * scrape) + "\n"
                      "vllm:inter_token_latency_seconds_bucket{le=\"+Inf\"} " + std::to_string(4 * scrape) + "\n"
                      "vllm:inter_token_latency_seconds_count " + std::to_string(4 * scrape) + "\n"
                      "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total " + std::to_string(5 * scrape) + "\n"
                      "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc 0.25\n"
                      "# TYPE vllm:cache_config_info gauge\nvllm:cache_config_info{block_size=\"16\",num_gpu_blocks=\"1000\"} 1\n",
                      200, "text/plain");
}

TEST(RemoteEngine, AVllmServersLatencyPercentilesKvUsageAndPoolReachTheSnapshot) {
  std::atomic<int> scrapes{0};
  CannedHttpServer server([&](const CannedRequest&) { return vllm_metrics(++scrapes); });
  ServerInfo info;
  info.kind = ServerKind::Vllm;
  RemoteEngineOptions options;
  options.metrics_interval_s = 0.05;
  RemoteEngine engine(make_endpoint(server.url()), info, {}, options);
  while (scrapes < 4) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const EngineMetricsSnapshot s = engine.metrics_snapshot();
  ASSERT_FALSE(s.steps.empty());
  // Over the window: half the observations at most 0.1 s, the rest in (0.1, 0.5].
  const LatencyPercentiles& ttft = s.steps.back().server_latency[static_cast<size_t>(ServerLatency::Ttft)];
  EXPECT_NEAR(ttft.p50_s, 0.1, 1e-9);
  EXPECT_NEAR(ttft.p99_s, 0.1 + 0.4 * 0.98, 1e-9);
  const LatencyPercentiles& itl = s.steps.back().server_latency[static_cast<size_t>(ServerLatency::InterToken)];
  EXPECT_NEAR(itl.p50_s, 0.015, 1e-9);
  EXPECT_NEAR(itl.p99_s, 0.01 + 0.01 * 0.99, 1e-9);
  // No end-to-end or queue-time histogram in this scrape: nothing claimed.
  EXPECT_EQ(s.steps.back().server_latency[static_cast<size_t>(ServerLatency::EndToEnd)].p50_s, -1);
  EXPECT_EQ(s.steps.back().server_latency[static_cast<size_t>(ServerLatency::Queue)].p99_s, -1);
  EXPECT_EQ(reported_kv_usage(s), 0.25);
  EXPECT_EQ(std::find(s.not_reported.begin(), s.not_reported.end(), "kv_cache_usage_perc"), s.not_reported.end());
  const std::optional<ServerKvPool> pool = engine.kv_pool();
  ASSERT_TRUE(pool.has_value());
  EXPECT_EQ(pool->block_size, 16);
  EXPECT_EQ(pool->blocks, 1000);
}

// A scrape the mapping refuses (a summary where it sums a counter) is skipped like one that failed;
// it used to throw out of the poller's thread and end the program.
TEST(RemoteEngine, AScrapeOfTheWrongTypesIsSkipped) {
  std::atomic<int> scrapes{0};
  CannedHttpServer server([&](const CannedRequest&) {
    ++scrapes;
    return test::canned("# TYPE llamacpp:prompt_tokens_total summary\nllamacpp:prompt_tokens_total_sum 1\n", 200, "text/plain");
  });
  RemoteEngineOptions options;
  options.metrics_interval_s = 0.05;
  RemoteEngine engine(make_endpoint(server.url()), llama_info(), {}, options);
  while (scrapes < 3) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(engine.metrics_snapshot().steps.empty());
}

// A poll that fails is said in the snapshot, naming the URL and why, and the server is asked less
// often while it keeps failing (the interval doubled per failure); one answer clears it all.
TEST(RemoteEngine, AFailingPollIsReportedAndAskedAgainLessOften) {
  std::mutex mu;
  std::vector<std::chrono::steady_clock::time_point> asked;
  CannedHttpServer server([&](const CannedRequest&) {
    std::lock_guard lock(mu);
    asked.push_back(std::chrono::steady_clock::now());
    return asked.size() <= 4 ? test::canned("not {metrics\n", 200, "text/plain") : vllm_metrics(static_cast<int>(asked.size()));
  });
  ServerInfo info;
  info.kind = ServerKind::Vllm;
  RemoteEngineOptions options;
  options.metrics_interval_s = 0.05;
  RemoteEngine engine(make_endpoint(server.url()), info, {}, options);
  const auto times = [&] {
    std::lock_guard lock(mu);
    return asked;
  };
  while (times().size() < 4) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const std::string error = engine.metrics_snapshot().source_error;
  EXPECT_NE(error.find(server.url() + "/metrics: metrics line 1"), std::string::npos) << error;
  EXPECT_NE(error.find("(asking again every 0.8 s)"), std::string::npos) << error;
  while (times().size() < 6) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto t = times();
  const auto gap = [&](size_t i) { return std::chrono::duration<double>(t[i] - t[i - 1]).count(); };
  EXPECT_GE(gap(1), 0.1);
  EXPECT_GE(gap(4), 0.8) << "after four failures in a row";
  EXPECT_EQ(engine.metrics_snapshot().source_error, "") << "the fifth poll was answered";
}

TEST(RemoteEngine, CancelEndsTheRequestAborted) {
  CannedHttpServer server([](const CannedRequest& r) {
    if (r.path == "/metrics") return test::canned("", 404, "text/plain");
    return sse({R"({"choices":[{"index":0,"delta":{"content":"Once"}}]})"}, true);
  });
  Recorder rec;
  RemoteEngine engine(make_endpoint(server.url()), llama_info(), rec.callbacks());
  const RequestId id = engine.submit(chat("tell a story"));
  while (!rec.has_text()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  engine.cancel(id);
  EXPECT_EQ(rec.wait(), StopReason::Aborted);
  EXPECT_TRUE(server.wait_for_hang_up(2000));
  // Without /metrics every server-fed panel says so.
  const EngineMetricsSnapshot s = engine.metrics_snapshot();
  EXPECT_NE(std::find(s.not_reported.begin(), s.not_reported.end(), "decode_tokens_per_second"), s.not_reported.end());
}

TEST(RemoteEngine, AFailingServerEndsTheRequestWithItsMessage) {
  CannedHttpServer server([](const CannedRequest&) { return test::canned(R"({"error":{"message":"context full"}})", 500); });
  Recorder rec;
  RemoteEngine engine(make_endpoint(server.url()), llama_info(), rec.callbacks());
  engine.submit(chat("hi"));
  EXPECT_EQ(rec.wait(), StopReason::Failed);
  EXPECT_NE(rec.error.find("HTTP 500: context full"), std::string::npos) << rec.error;
}

TEST(RemoteEngine, ClosingWithARequestInFlightAbortsIt) {
  CannedHttpServer server([](const CannedRequest& r) {
    if (r.path == "/metrics") return test::canned("", 404, "text/plain");
    return sse({}, true);
  });
  Recorder rec;
  const auto start = std::chrono::steady_clock::now();
  {
    RemoteEngine engine(make_endpoint(server.url()), llama_info(), rec.callbacks());
    engine.submit(chat("hi"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(rec.reason, StopReason::Aborted);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

}  // namespace
}  // namespace inferscope
