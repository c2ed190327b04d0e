// The remote client, RemoteEngine and the CLI's --endpoint commands (generate, chat, serve-sim)
// against a real llama.cpp llama-server (built by scripts/llama-server.sh) serving the demo model
// with 4 slots and /metrics, and once with the demo model as its own draft.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <memory>
#include <thread>

#include "core/remote/http_client.h"
#include "core/remote/metric_snapshot.h"
#include "core/remote/remote_completion.h"
#include "core/remote/remote_engine.h"
#include "core/remote/remote_request.h"
#include "core/remote/server_probe.h"
#include "tests/support/canned_http_server.h"
#include "tests/support/cli_runner.h"
#include "tests/support/llama_server_process.h"

namespace inferscope {
namespace {

constexpr int kSlots = 4;
constexpr int kContext = 2048;  // 512 tokens per slot

class LlamaServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = std::make_unique<test::LlamaServerProcess>(
        LLAMA_SERVER, INFERSCOPE_DEMO_MODEL,
        std::vector<std::string>{"-np", std::to_string(kSlots), "-c", std::to_string(kContext), "-t", "1", "--metrics"});
  }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override { ASSERT_NE(server_, nullptr) << "llama-server did not start (see above)"; }

  static RemoteEndpoint endpoint() { return make_endpoint(server_->url()); }

  // A greedy chat request that recomputes its whole prompt (no reuse of an earlier request's KV), so
  // that every run and every counter sees the same work.
  static nlohmann::json chat_body(const std::string& question, int32_t max_tokens, bool ignore_eos = false) {
    SamplingParams greedy;
    greedy.ignore_eos = ignore_eos;
    nlohmann::json body = chat_request_body(endpoint(), ServerKind::LlamaCpp, {{"user", question}}, greedy, max_tokens);
    body["cache_prompt"] = false;
    return body;
  }

  static std::string get(const std::string& path) {
    HttpRequest request;
    request.url = server_->url() + path;
    return http_perform(request).body;
  }

  // Waits until no slot is processing; false after `timeout_ms`.
  static bool slots_idle(int timeout_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      bool busy = false;
      for (const nlohmann::json& slot : nlohmann::json::parse(get("/slots"))) busy = busy || slot.at("is_processing").get<bool>();
      if (!busy) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  static inline std::unique_ptr<test::LlamaServerProcess> server_;
};

TEST_F(LlamaServer, IsDetectedWithItsSlotsAndContext) {
  const ServerInfo info = probe_server(endpoint());
  EXPECT_EQ(info.kind, ServerKind::LlamaCpp);
  EXPECT_EQ(info.slot_count, kSlots);
  EXPECT_EQ(info.context_length, kContext / kSlots);
  ASSERT_EQ(info.models.size(), 1u);
}

TEST_F(LlamaServer, StreamedTextEqualsTheNonStreamedTextForGreedyRequests) {
  for (const std::string question : {"What is the capital of France?", "Name three colours.", "Write a haiku about rain."}) {
    const nlohmann::json body = chat_body(question, 48);
    const RemoteReply streamed = stream_completion(endpoint(), "/v1/chat/completions", body);
    ASSERT_EQ(streamed.outcome, RemoteOutcome::Finished) << streamed.error;

    nlohmann::json whole = body;
    whole["stream"] = false;
    whole.erase("stream_options");
    HttpRequest request;
    request.url = server_->url() + "/v1/chat/completions";
    request.post = true;
    request.body = whole.dump();
    std::string text;
    for (const ChatEvent& e : decode_completion_payload(http_perform(request).body)) {
      if (const auto* d = std::get_if<ContentDelta>(&e)) text += d->text;
    }
    EXPECT_FALSE(text.empty()) << question;
    EXPECT_EQ(streamed.text, text) << question;
    ASSERT_TRUE(streamed.usage.has_value());
    ASSERT_TRUE(streamed.timings.has_value());
    EXPECT_EQ(streamed.usage->completion_tokens, streamed.timings->predicted_n);
    EXPECT_GT(streamed.timing.time_to_first_token_s, 0);
  }
}

TEST_F(LlamaServer, CancelMidStreamStopsTheServersSlot) {
  const MetricSnapshot before = MetricSnapshot::parse(get("/metrics"));
  std::atomic<bool> cancel{false};
  int chunks = 0;
  RemoteStreamCallbacks callbacks;
  callbacks.on_content = [&](std::string_view, double) { cancel = ++chunks >= 3; };
  const RemoteReply reply = stream_completion(endpoint(), "/v1/chat/completions", chat_body("Tell me a long story.", 400, true),
                                              callbacks, &cancel);
  EXPECT_EQ(reply.outcome, RemoteOutcome::Cancelled);
  EXPECT_FALSE(reply.text.empty());
  // The server notices the closed connection and frees the slot long before 400 tokens.
  EXPECT_TRUE(slots_idle(5000));
  const MetricSnapshot after = MetricSnapshot::parse(get("/metrics"));
  const double predicted = *after.sum("llamacpp:tokens_predicted_total") - before.sum("llamacpp:tokens_predicted_total").value_or(0);
  EXPECT_LT(predicted, 400);
}

TEST_F(LlamaServer, MetricCountersMatchTheRequestsUsage) {
  ASSERT_TRUE(slots_idle(5000));
  const MetricSnapshot before = MetricSnapshot::parse(get("/metrics"));
  const std::vector<std::string> questions = {"Hi!", "What is two plus two?", "Name a fruit.", "Say something kind."};
  std::vector<RemoteReply> replies(questions.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < questions.size(); ++i) {
    clients.emplace_back([&, i] { replies[i] = stream_completion(endpoint(), "/v1/chat/completions", chat_body(questions[i], 24)); });
  }
  for (std::thread& t : clients) t.join();
  int64_t prompt = 0, generated = 0;
  for (const RemoteReply& r : replies) {
    ASSERT_EQ(r.outcome, RemoteOutcome::Finished) << r.error;
    ASSERT_TRUE(r.usage.has_value());
    prompt += r.usage->prompt_tokens;
    generated += r.usage->completion_tokens;
  }
  ASSERT_TRUE(slots_idle(5000));
  const MetricSnapshot after = MetricSnapshot::parse(get("/metrics"));
  const auto increase = [&](const char* name) { return *after.sum(name) - before.sum(name).value_or(0); };
  EXPECT_EQ(increase("llamacpp:prompt_tokens_total"), static_cast<double>(prompt));
  EXPECT_EQ(increase("llamacpp:tokens_predicted_total"), static_cast<double>(generated));
  EXPECT_GT(increase("llamacpp:n_decode_total"), 0);
}

TEST_F(LlamaServer, GenerateOnTheEndpointReportsTheServersCounts) {
  const nlohmann::json out =
      test::cli_json("generate --endpoint " + server_->url() + " --chat 'What is the capital of France?' -n 16 --json");
  EXPECT_EQ(out["server"]["kind"], "llama.cpp");
  EXPECT_EQ(out["completion_tokens"], 16);
  EXPECT_EQ(out["finish_reason"], "length");
  EXPECT_EQ(out["server"]["timings"]["predicted_n"], 16);
  EXPECT_GT(out["prompt_tokens"].get<int>(), 10);
  EXPECT_FALSE(out["text"].get<std::string>().empty());
  EXPECT_TRUE(out["tokens"].is_null());
  EXPECT_EQ(out["unavailable"], nlohmann::json::array({"tokens"}));
}

TEST_F(LlamaServer, TheTerminalChatRunsOnTheEndpoint) {
  const std::string turns_file = (std::filesystem::temp_directory_path() / ("chat-turns-" + std::to_string(::getpid()))).string();
  std::ofstream(turns_file) << "Name three colours.\nAnd three fruits.\n";
  const test::CliRun r = test::cli("chat --endpoint " + server_->url() + " -n 16 < " + turns_file);
  std::filesystem::remove(turns_file);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(" on llama.cpp at " + server_->url()), std::string::npos) << r.out;
  // Two turns, each counted by the server's usage: 16 tokens each (the length limit).
  size_t turns = 0;
  for (size_t at = r.out.find("[16 tokens, length]"); at != std::string::npos; at = r.out.find("[16 tokens, length]", at + 1)) ++turns;
  EXPECT_EQ(turns, 2u) << r.out;
}

TEST_F(LlamaServer, ServeSimReplaysAWorkloadWithTheLocalRunsPrompts) {
  const std::string workload = "--generate-workload 16 --prompt-len 8:24 --output-len 4:8 --seed 5";
  const nlohmann::json remote = test::cli_json("serve-sim --endpoint " + server_->url() + " --tokenizer " + INFERSCOPE_DEMO_MODEL + " " +
                                               workload + " --max-concurrency 4 --json");
  const nlohmann::json local = test::cli_json("serve-sim --model " + std::string(INFERSCOPE_DEMO_MODEL) + " " + workload + " --dry-run --json");
  EXPECT_EQ(remote["requests_total"], 16);
  EXPECT_EQ(remote["requests_finished"], 16);
  ASSERT_EQ(remote["requests"].size(), 16u);
  int64_t generated = 0;
  for (size_t i = 0; i < 16; ++i) {
    const nlohmann::json& r = remote["requests"][i];
    // The same prompt ids as the local run, each request run to its output length (ignore_eos).
    EXPECT_EQ(r["prompt_tokens"], local["requests"][i]["prompt_tokens"]) << i;
    EXPECT_EQ(r["generation_tokens"], local["requests"][i]["generation_tokens"]) << i;
    EXPECT_EQ(r["finish_reason"], "length");
    EXPECT_GT(r["time_to_first_token_seconds"].get<double>(), 0);
    generated += r["generation_tokens"].get<int64_t>();
  }
  EXPECT_EQ(remote["output_tokens"], generated);
  EXPECT_EQ(remote["decode_tokens"], generated);  // the server's own counter over the run
  EXPECT_LE(remote["max_concurrent_requests"].get<double>(), 4);
  EXPECT_GT(remote["steps"].get<double>(), 0);
  // llama-server does not report KV usage or preemptions: null, and said so.
  EXPECT_TRUE(remote["kv_cache_usage_perc_peak"].is_null());
  const nlohmann::json& unavailable = remote["unavailable"];
  EXPECT_NE(std::find(unavailable.begin(), unavailable.end(), "kv_cache_usage_perc_peak"), unavailable.end());
  EXPECT_NE(std::find(unavailable.begin(), unavailable.end(), "num_preemptions"), unavailable.end());
  EXPECT_EQ(remote["config"]["server"], "llama.cpp");
  // Every key of the local summary is there.
  for (const auto& [key, value] : local.items()) {
    if (key != "config") {
      EXPECT_TRUE(remote.contains(key)) << key;
    }
  }
}

TEST_F(LlamaServer, TheRemoteEngineChatsAndFillsTheDashboardFromMetrics) {
  ASSERT_TRUE(slots_idle(5000));
  std::mutex mu;
  std::condition_variable cv;
  std::string text;
  std::optional<StopReason> reason;
  EngineCallbacks cb;
  cb.on_token = [&](RequestId, std::string_view piece, TokenId, const TokenTiming&) {
    std::lock_guard lock(mu);
    text += piece;
  };
  cb.on_finished = [&](RequestId, StopReason r) {
    std::lock_guard lock(mu);
    reason = r;
    cv.notify_all();
  };
  RemoteEngineOptions options;
  options.metrics_interval_s = 0.1;
  RemoteEngine engine(endpoint(), probe_server(endpoint()), cb, options);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the baseline scrape
  EngineRequest request;
  request.messages = {{"user", "Name three colours."}};
  request.max_tokens = 24;
  engine.submit(request);
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return reason.has_value(); }));
  }
  EXPECT_EQ(text, stream_completion(endpoint(), "/v1/chat/completions", chat_body("Name three colours.", 24)).text);
  ASSERT_TRUE(slots_idle(5000));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // a scrape after both requests
  const EngineMetricsSnapshot s = engine.metrics_snapshot();
  ASSERT_EQ(s.requests.size(), 1u);
  const int generated = s.requests[0].generation_tokens;
  EXPECT_GT(generated, 0);
  EXPECT_GT(s.requests[0].time_to_first_token_seconds, 0);
  // The server's counter since connecting: this request and the comparison stream's.
  EXPECT_GE(s.generation_tokens_total, generated);
  EXPECT_GT(s.num_steps, 0);
  EXPECT_EQ(s.source.rfind("llama.cpp at " + server_->url(), 0), 0u) << s.source;
}

// llama-server with the demo model as its own draft: every draft is accepted, and the speculative
// counters reach the timings, /metrics and the remote engine's snapshot.
TEST(LlamaServerSpeculative, DraftCountersReachTimingsMetricsAndTheSnapshot) {
  test::LlamaServerProcess server(LLAMA_SERVER, INFERSCOPE_DEMO_MODEL,
                                  {"-md", INFERSCOPE_DEMO_MODEL, "--spec-type", "draft-simple", "--spec-draft-n-max", "4", "-np",
                                   "1", "-c", "1024", "-t", "1", "--metrics"});
  const RemoteEndpoint endpoint = make_endpoint(server.url());
  RemoteEngineOptions options;
  options.metrics_interval_s = 0.1;
  RemoteEngine engine(endpoint, probe_server(endpoint), {}, options);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the baseline scrape
  SamplingParams greedy;
  const RemoteReply reply = stream_completion(
      endpoint, "/v1/chat/completions", chat_request_body(endpoint, ServerKind::LlamaCpp, {{"user", "Count from 1 to 20."}}, greedy, 40));
  ASSERT_EQ(reply.outcome, RemoteOutcome::Finished) << reply.error;
  ASSERT_TRUE(reply.timings.has_value());
  ASSERT_TRUE(reply.timings->draft_n.has_value());
  EXPECT_GT(*reply.timings->draft_n, 0);
  EXPECT_EQ(reply.timings->draft_n_accepted, reply.timings->draft_n);  // the target drafts for itself
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // a scrape after the request
  const EngineMetricsSnapshot s = engine.metrics_snapshot();
  EXPECT_EQ(s.spec.num_draft_tokens, *reply.timings->draft_n);
  EXPECT_EQ(s.spec.num_accepted_tokens, *reply.timings->draft_n_accepted);
  EXPECT_GT(s.spec.num_drafts, 0);
  EXPECT_FALSE(s.spec.num_accepted_tokens_per_pos.empty());
  EXPECT_EQ(s.spec_mode, "server");
  for (const char* panel : {"spec_acceptance", "spec_decode"}) {
    EXPECT_EQ(std::find(s.not_reported.begin(), s.not_reported.end(), panel), s.not_reported.end()) << panel;
  }
}

TEST(LlamaServerCli, ADeadEndpointIsAClearError) {
  const std::string url = "http://127.0.0.1:" + std::to_string(test::unused_port());
  const test::CliRun r = test::cli("generate --endpoint " + url + " --chat hi");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("GET " + url + "/v1/models: could not connect"), std::string::npos) << r.out;
  const test::CliRun local = test::cli("generate --endpoint " + url + " --chat hi --kv paged");
  EXPECT_EQ(local.exit_code, 2);
  EXPECT_NE(local.out.find("--kv configures the local engine"), std::string::npos) << local.out;
}

}  // namespace
}  // namespace inferscope
