// inferscope's OpenAI-compatible server (core/server) on the demo model, in this process, asked over
// real HTTP by core's own client: what clients read (whole and streamed answers, usage, logprobs),
// exactness against the engine alone and under concurrency, every error's status and shape, the API
// key, a client hanging up, one that stops reading, curl -N reading a stream, draining, and the
// workbench's remote engine talking to it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <sstream>
#include <mutex>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "core/engine/engine.h"
#include "core/engine/kv_snapshot_json.h"
#include "core/engine/metrics_json.h"
#include "core/model/llama_model.h"
#include "core/remote/http_client.h"
#include "core/remote/metric_snapshot.h"
#include "core/remote/server_metrics.h"
#include "core/remote/remote_completion.h"
#include "core/remote/remote_engine.h"
#include "core/remote/server_probe.h"
#include "core/server/openai_server.h"
#include "core/version/version.h"
#include "tests/support/cli_runner.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

using nlohmann::json;

const LlamaModel& demo() {
  static const std::unique_ptr<LlamaModel> model = LlamaModel::load(test::demo_model_path());
  return *model;
}

// A server on a free loopback port, serving on its own thread until the end of the test.
class Served {
 public:
  explicit Served(ServeOptions options = {}, int32_t max_running = 0) {
    options.port = 0;
    options.model_name = "demo";
    options.context_length = 2048;
    if (options.max_body_bytes == (size_t{8} << 20)) options.max_body_bytes = 64 << 10;
    EngineConfig config;
    config.context_length = options.context_length;
    config.scheduler.max_running = max_running;
    engine_ = std::make_unique<Engine>(demo(), config, streams_.callbacks());
    server_ = std::make_unique<OpenAiServer>(demo(), *engine_, streams_, options);
    thread_ = std::thread([this] { server_->serve(); });
  }
  ~Served() {
    server_->stop(0);
    thread_.join();
  }
  std::string url(const std::string& path = "") const { return server_->url() + path; }
  OpenAiServer& server() { return *server_; }
  Engine& engine() { return *engine_; }
  // Joins the serving thread (after a stop()).
  void wait() {
    thread_.join();
    thread_ = std::thread([] {});
  }

 private:
  RequestStreams streams_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<OpenAiServer> server_;
  std::thread thread_;
};

json post(const std::string& url, const json& body, std::vector<std::string> headers = {}) {
  HttpRequest r;
  r.url = url;
  r.post = true;
  r.body = body.dump();
  r.headers = std::move(headers);
  r.total_timeout_s = 120;
  return json::parse(http_perform(r).body);
}

// The status and the error object of a request that must fail.
std::pair<long, json> refused(const std::string& url, const std::string& body, bool is_post = true,
                              std::vector<std::string> headers = {}) {
  HttpRequest r;
  r.url = url;
  r.post = is_post;
  r.body = body;
  r.headers = std::move(headers);
  try {
    http_perform(r);
  } catch (const HttpError& e) {
    return {e.status(), json::parse(e.body(), nullptr, false)};
  }
  ADD_FAILURE() << "accepted: " << url << " " << body;
  return {};
}

json chat_body(const std::string& content, int max_tokens) {
  return {{"messages", json::array({{{"role", "user"}, {"content", content}}})}, {"max_tokens", max_tokens}, {"temperature", 0}};
}

RemoteEndpoint endpoint(const Served& s) { return {s.url(), "", ""}; }

TEST(OpenAiServer, HealthAndModels) {
  Served s;
  HttpRequest health;
  health.url = s.url("/health");
  EXPECT_EQ(json::parse(http_perform(health).body), (json{{"status", "ok"}}));
  HttpRequest models;
  models.url = s.url("/v1/models");
  const json m = json::parse(http_perform(models).body);
  EXPECT_EQ(m["object"], "list");
  ASSERT_EQ(m["data"].size(), 1u);
  EXPECT_EQ(m["data"][0]["id"], "demo");
  EXPECT_EQ(m["data"][0]["object"], "model");
}

// At temperature 0 the served reply is generate --chat's, streamed or whole, with its usage.
TEST(OpenAiServer, AChatAnswerIsGeneratesWholeOrStreamed) {
  Served s;
  const json whole = post(s.url("/v1/chat/completions"), chat_body("Name three colours.", 24));
  EXPECT_EQ(whole["object"], "chat.completion");
  EXPECT_EQ(whole["model"], "demo");
  const std::string text = whole["choices"][0]["message"]["content"];
  const json generated = test::cli_json("generate -m " + test::demo_model_path() + " --chat 'Name three colours.' -n 24 --json");
  EXPECT_EQ(text, generated["text"].get<std::string>());
  EXPECT_EQ(whole["choices"][0]["finish_reason"], generated["finish_reason"]);
  EXPECT_EQ(whole["usage"]["completion_tokens"], generated["completion_tokens"]);
  EXPECT_EQ(whole["usage"]["prompt_tokens"], generated["prompt_tokens"]);

  json stream_body = chat_body("Name three colours.", 24);
  stream_body["stream"] = true;
  stream_body["stream_options"] = {{"include_usage", true}};
  const RemoteReply streamed = stream_completion(endpoint(s), "/v1/chat/completions", stream_body);
  EXPECT_EQ(streamed.outcome, RemoteOutcome::Finished) << streamed.error;
  EXPECT_EQ(streamed.text, text);
  EXPECT_EQ(streamed.finish_reason, whole["choices"][0]["finish_reason"]);
  ASSERT_TRUE(streamed.usage.has_value());
  EXPECT_EQ(streamed.usage->completion_tokens, whole["usage"]["completion_tokens"].get<int64_t>());
  EXPECT_EQ(streamed.usage->prompt_tokens, whole["usage"]["prompt_tokens"].get<int64_t>());
}

// The stream's events in order: the role, deltas, the finish, the usage, [DONE].
TEST(OpenAiServer, TheStreamsEventsComeInOpenAisOrder) {
  Served s;
  json body = chat_body("Hi", 6);
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  HttpRequest r;
  r.url = s.url("/v1/chat/completions");
  r.post = true;
  r.body = body.dump();
  const HttpResponse res = http_perform(r);
  EXPECT_EQ(res.content_type.rfind("text/event-stream", 0), 0u) << res.content_type;
  std::vector<std::string> data;
  for (size_t at = res.body.find("data: "); at != std::string::npos; at = res.body.find("data: ", at + 1)) {
    data.push_back(res.body.substr(at + 6, res.body.find("\n\n", at) - at - 6));
  }
  ASSERT_GE(data.size(), 4u) << res.body;
  EXPECT_EQ(json::parse(data.front())["choices"][0]["delta"], (json{{"role", "assistant"}}));
  EXPECT_EQ(data.back(), "[DONE]");
  const json usage = json::parse(data[data.size() - 2]);
  EXPECT_TRUE(usage["choices"].empty());
  const json finish = json::parse(data[data.size() - 3]);
  EXPECT_FALSE(finish["choices"][0]["finish_reason"].is_null());
  int deltas = 0;
  for (size_t i = 1; i + 3 < data.size(); ++i) {
    const json chunk = json::parse(data[i]);
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    EXPECT_EQ(chunk["id"], usage["id"]) << "one id for the whole stream";
    EXPECT_TRUE(chunk["choices"][0]["finish_reason"].is_null());
    deltas += chunk["choices"][0]["delta"].contains("content") ? 1 : 0;
  }
  EXPECT_EQ(deltas, usage["usage"]["completion_tokens"].get<int>()) << "one delta per token on this prompt";
}

// Batch invariance through HTTP: clients at once each get what they get alone.
TEST(OpenAiServer, ConcurrentClientsEachGetWhatTheyGetAlone) {
  Served s;
  const std::vector<std::string> prompts = {"Name three colours.", "What is 2 + 2?", "Say hello in French.", "Name a planet."};
  std::vector<std::string> alone;
  for (const std::string& p : prompts) alone.push_back(post(s.url("/v1/chat/completions"), chat_body(p, 12))["choices"][0]["message"]["content"]);
  std::vector<std::string> together(prompts.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i) {
    clients.emplace_back([&, i] {
      json body = chat_body(prompts[i], 12);
      body["stream"] = i % 2 == 0;
      together[i] = body["stream"] ? stream_completion(endpoint(s), "/v1/chat/completions", body).text
                                   : post(s.url("/v1/chat/completions"), body)["choices"][0]["message"]["content"].get<std::string>();
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(together, alone);
}

TEST(OpenAiServer, CompletionsTakeTokenIdsAndGiveLogprobs) {
  Served s;
  const std::vector<TokenId> ids = demo().tokenizer().encode("Once upon a time", true);
  const json j = post(s.url("/v1/completions"), {{"prompt", ids}, {"max_tokens", 5}, {"temperature", 0}, {"logprobs", 2}});
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["usage"]["prompt_tokens"], ids.size());
  const json& lp = j["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 5u);
  std::string joined;
  for (size_t i = 0; i < 5; ++i) {
    joined += lp["tokens"][i].get<std::string>();
    EXPECT_LE(lp["token_logprobs"][i].get<double>(), 0);
    ASSERT_EQ(lp["top_logprobs"][i].size(), 2u);
    // Greedy: the chosen token is the most likely one.
    double best = -1e9;
    for (const auto& [token, logprob] : lp["top_logprobs"][i].items()) best = std::max(best, logprob.get<double>());
    EXPECT_DOUBLE_EQ(best, lp["token_logprobs"][i].get<double>());
  }
  EXPECT_EQ(joined, j["choices"][0]["text"]);
  // The same text from the prompt as text.
  EXPECT_EQ(post(s.url("/v1/completions"), {{"prompt", "Once upon a time"}, {"max_tokens", 5}, {"temperature", 0}})["choices"][0]["text"],
            j["choices"][0]["text"]);
}

TEST(OpenAiServer, BadRequestsGetOpenAisErrorShapeAndStatus) {
  Served s;
  const std::string chat = s.url("/v1/chat/completions");
  const auto [malformed, malformed_error] = refused(chat, "{not json");
  EXPECT_EQ(malformed, 400);
  EXPECT_EQ(malformed_error["error"]["type"], "invalid_request_error");
  EXPECT_TRUE(malformed_error["error"].contains("param"));
  EXPECT_TRUE(malformed_error["error"].contains("code"));
  const auto [typed, typed_error] = refused(chat, R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": "many"})");
  EXPECT_EQ(typed, 400);
  EXPECT_EQ(typed_error["error"]["param"], "max_tokens");
  const auto [n, n_error] = refused(chat, R"({"messages": [{"role": "user", "content": "x"}], "n": 3})");
  EXPECT_EQ(n, 400);
  EXPECT_EQ(n_error["error"]["param"], "n");
  const auto [route, route_error] = refused(s.url("/v1/embeddings"), "{}");
  EXPECT_EQ(route, 404);
  EXPECT_EQ(route_error["error"]["type"], "not_found_error");
  const auto [large, large_error] = refused(chat, std::string(70 << 10, ' '));
  EXPECT_EQ(large, 413);
  EXPECT_NE(large_error["error"]["message"].get<std::string>().find("65536 bytes"), std::string::npos) << large_error;
  std::string words;
  for (int i = 0; i < 2100; ++i) words += " word";
  const auto [longer, longer_error] = refused(s.url("/v1/completions"), json{{"prompt", words}}.dump());
  EXPECT_EQ(longer, 400);
  EXPECT_EQ(longer_error["error"]["code"], "context_length_exceeded");
  const std::string message = longer_error["error"]["message"];
  const size_t tokens = demo().tokenizer().encode(words, true).size();
  EXPECT_NE(message.find("has " + std::to_string(tokens) + " tokens and the context holds 2048"), std::string::npos) << message;
  const auto [vocab, vocab_error] = refused(s.url("/v1/completions"), R"({"prompt": [1, 9999999]})");
  EXPECT_EQ(vocab, 400);
  EXPECT_EQ(vocab_error["error"]["param"], "prompt");
  // A form-encoded body (curl -d's default) is read as the JSON it is, past httplib's 8 KiB for forms.
  HttpRequest form;
  form.url = s.url("/v1/completions");
  form.post = true;
  form.body = json{{"prompt", "Hi"}, {"max_tokens", 1}, {"user", words.substr(0, 9000)}}.dump();
  form.headers = {"Content-Type: application/x-www-form-urlencoded"};
  EXPECT_EQ(json::parse(http_perform(form).body)["object"], "text_completion");
}

TEST(OpenAiServer, AKeyIsAskedOfEveryV1Route) {
  ServeOptions options;
  options.api_key = "s3cret";
  Served s(options);
  const std::string body = chat_body("Hi", 2).dump();
  const auto [none, none_error] = refused(s.url("/v1/chat/completions"), body);
  EXPECT_EQ(none, 401);
  EXPECT_EQ(none_error["error"]["code"], "invalid_api_key");
  EXPECT_EQ(refused(s.url("/v1/chat/completions"), body, true, {"Authorization: Bearer s3cre"}).first, 401);
  EXPECT_EQ(refused(s.url("/v1/models"), "", false, {"Authorization: Bearer s3cret!"}).first, 401);
  EXPECT_EQ(post(s.url("/v1/chat/completions"), chat_body("Hi", 2), {"Authorization: Bearer s3cret"})["object"], "chat.completion");
  for (const char* open : {"/health", "/metrics"}) {
    HttpRequest r;
    r.url = s.url(open);
    EXPECT_NO_THROW(http_perform(r)) << open << " answers probes and scrapers without the key, as vLLM's";
  }
}

TEST(OpenAiServer, CorsHeadersOnlyWhenAnOriginIsAllowed) {
  ServeOptions options;
  options.cors_origin = "http://localhost:3000";
  Served s(options);
  const std::string preflight = "curl -s -i -X OPTIONS " + s.url("/v1/chat/completions") + " -H 'Origin: http://localhost:3000'";
  const test::CliRun with = test::run_cli(preflight, "", test::Stderr::Dropped);
  EXPECT_NE(with.out.find("Access-Control-Allow-Origin: http://localhost:3000"), std::string::npos) << with.out;
  Served plain;
  const test::CliRun without = test::run_cli("curl -s -i " + plain.url("/health"), "", test::Stderr::Dropped);
  EXPECT_EQ(without.out.find("Access-Control-Allow-Origin"), std::string::npos) << without.out;
}

// /metrics after three requests: vLLM's names read back by the reader that reads vLLM, and
// promtool's checker finds nothing wrong but the colons of vLLM's own names.
TEST(OpenAiServer, MetricsSpeakVllmsNames) {
  Served s;
  int64_t generated = 0;
  for (int i = 0; i < 3; ++i) {
    generated += post(s.url("/v1/completions"), {{"prompt", "Once upon a time"}, {"max_tokens", 6}, {"temperature", 0}})["usage"]["completion_tokens"].get<int64_t>();
  }
  HttpRequest scrape;
  scrape.url = s.url("/metrics");
  const HttpResponse res = http_perform(scrape);
  EXPECT_EQ(res.content_type.rfind("text/plain; version=0.0.4", 0), 0u) << res.content_type;
  const MetricSnapshot metrics = MetricSnapshot::parse(res.body);
  const ServerScrape read = read_server_scrape(metrics, ServerKind::Vllm);
  EXPECT_EQ(read.counters.generation_tokens, static_cast<double>(generated));
  EXPECT_EQ(read.gauges.requests_running, 0);
  EXPECT_EQ(metrics.sum("vllm:request_success_total", {{"finished_reason", "length"}}), 3);
  const auto& ttft = read.latency[static_cast<size_t>(ServerLatency::Ttft)];
  ASSERT_TRUE(ttft.has_value());
  EXPECT_EQ(ttft->count, 3);
  EXPECT_EQ(metrics.sum("vllm:num_requests_running", {{"model_name", "demo"}}), 0) << "labelled with the model";

  const std::string file = ::testing::TempDir() + "/inferscope-metrics.txt";
  {
    std::ofstream out(file);
    out << res.body;
  }
  const test::CliRun check = test::run_cli("promtool check metrics < " + file, "", test::Stderr::Joined);
  ASSERT_NE(check.exit_code, 127) << "promtool is missing: scripts/setup.sh --tests installs Debian's prometheus";
  EXPECT_TRUE(check.exit_code == 0 || check.exit_code == 3) << check.out;
  std::istringstream lines(check.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_NE(line.find("metric names should not contain ':'"), std::string::npos) << "promtool: " << line;
  }
}

// 64 streaming clients at once: each gets one whole answer, the counters count each request once,
// and /health answers all the while.
TEST(OpenAiServer, SixtyFourStreamingClientsAreEachAnsweredOnce) {
  Served s;
  constexpr int kClients = 64, kTokens = 8;
  std::atomic<bool> done{false};
  std::atomic<int> health_ok{0}, health_failed{0};
  std::thread prober([&] {
    while (!done) {
      HttpRequest health;
      health.url = s.url("/health");
      health.total_timeout_s = 2;
      try {
        http_perform(health);
        ++health_ok;
      } catch (const HttpError&) {
        ++health_failed;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  std::vector<RemoteReply> replies(kClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      const json body = {{"prompt", "Request " + std::to_string(i) + ":"}, {"max_tokens", kTokens}, {"ignore_eos", true},
                         {"temperature", 0}, {"stream", true}, {"stream_options", {{"include_usage", true}}}};
      replies[static_cast<size_t>(i)] = stream_completion(endpoint(s), "/v1/completions", body);
    });
  }
  for (std::thread& t : clients) t.join();
  done = true;
  prober.join();
  for (int i = 0; i < kClients; ++i) {
    const RemoteReply& r = replies[static_cast<size_t>(i)];
    EXPECT_EQ(r.outcome, RemoteOutcome::Finished) << i << ": " << r.error;
    EXPECT_EQ(r.finish_reason, "length") << i;
    ASSERT_TRUE(r.usage.has_value()) << i;
    EXPECT_EQ(r.usage->completion_tokens, kTokens) << i;
  }
  const EngineMetricsSnapshot m = s.engine().metrics_snapshot();
  EXPECT_EQ(m.finished_by_reason.at("length"), kClients) << "each request ran once";
  EXPECT_EQ(m.generation_tokens_total, kClients * kTokens);
  EXPECT_GT(health_ok, 0);
  EXPECT_EQ(health_failed, 0);
}

// With one request running and one waiting, a third finds the queue full: 503 with Retry-After.
TEST(OpenAiServer, AFullQueueIsA503WithRetryAfter) {
  ServeOptions options;
  options.max_queue = 1;
  Served s(options, 1);
  json body = {{"prompt", "Once upon a time"}, {"max_tokens", 1500}, {"ignore_eos", true}, {"stream", true}};
  std::atomic<bool> cancel{false}, started{false};
  RemoteStreamCallbacks cb;
  cb.on_content = [&](std::string_view, double) { started = true; };
  std::thread running([&] { stream_completion(endpoint(s), "/v1/completions", body, cb, &cancel); });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::thread waiting([&] { stream_completion(endpoint(s), "/v1/completions", body, {}, &cancel); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (s.engine().metrics_snapshot().num_requests_waiting < 1) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the second request never waited";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const test::CliRun third = test::run_cli("curl -s -i " + s.url("/v1/completions") + " -H 'Content-Type: application/json' -d '" +
                                               json{{"prompt", "Hi"}, {"max_tokens", 2}}.dump() + "'",
                                           "", test::Stderr::Dropped);
  cancel = true;
  running.join();
  waiting.join();
  EXPECT_NE(third.out.find("HTTP/1.1 503"), std::string::npos) << third.out;
  EXPECT_NE(third.out.find("Retry-After: 1"), std::string::npos) << third.out;
  EXPECT_NE(third.out.find("\"code\":\"queue_full\""), std::string::npos) << third.out;
}

// A client that hangs up mid-stream: its request ends and its KV blocks are free soon after.
TEST(OpenAiServer, AClientThatHangsUpFreesItsRequest) {
  Served s;
  json body = chat_body("Tell me a long story about a dragon.", 1500);
  body["stream"] = true;
  std::atomic<bool> cancel{false};
  std::atomic<int> pieces{0};
  RemoteStreamCallbacks cb;
  cb.on_content = [&](std::string_view, double) {
    if (++pieces == 3) cancel = true;
  };
  const RemoteReply reply = stream_completion(endpoint(s), "/v1/chat/completions", body, cb, &cancel);
  EXPECT_EQ(reply.outcome, RemoteOutcome::Cancelled);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    const std::optional<KvSnapshot> kv = s.engine().kv_snapshot();
    ASSERT_TRUE(kv.has_value());
    if (kv->sequences.empty()) break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the request still holds its blocks";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(s.engine().metrics_snapshot().requests.back().finish_reason, "abort");
}

// A client that sends a streamed request and then reads nothing, with a receive buffer of a few KiB,
// on a loopback socket of its own. Closes it when it goes.
class SilentClient {
 public:
  SilentClient(int32_t port, const std::string& path, const json& body) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    int small = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) throw std::runtime_error("connect failed");
    const std::string payload = body.dump();
    const std::string request = "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                "Content-Length: " + std::to_string(payload.size()) + "\r\n\r\n" + payload;
    if (::send(fd_, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size())) throw std::runtime_error("send failed");
  }
  ~SilentClient() { ::close(fd_); }
  SilentClient(const SilentClient&) = delete;
  SilentClient& operator=(const SilentClient&) = delete;

 private:
  int fd_;
};

// A client that stops reading stalls neither the engine nor other clients, and its stream is
// cancelled once a write has waited write_timeout_s.
TEST(OpenAiServer, AClientThatStopsReadingIsCutOff) {
  ServeOptions options;
  options.write_timeout_s = 1;
  Served s(options);
  // Top logprobs (with their bytes) make each chunk a few KiB, so the socket's buffers fill within a few hundred tokens.
  json body = chat_body("Tell me a long story.", 1900);
  body["ignore_eos"] = true;
  body["stream"] = true;
  body["logprobs"] = true;
  body["top_logprobs"] = 20;
  SilentClient silent(s.server().port(), "/v1/chat/completions", body);
  const auto waiting_started = std::chrono::steady_clock::now();
  while (s.engine().metrics_snapshot().num_requests_running < 1) {
    ASSERT_LT(std::chrono::steady_clock::now() - waiting_started, std::chrono::seconds(10)) << "the request never ran";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Another client is answered while the silent one's stream is stuck.
  EXPECT_EQ(post(s.url("/v1/completions"), {{"prompt", "Hi"}, {"max_tokens", 4}, {"temperature", 0}})["object"], "text_completion");
  // The silent client's request was the first: id 0.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const EngineMetricsSnapshot m = s.engine().metrics_snapshot();
    const auto silent_request = std::find_if(m.requests.begin(), m.requests.end(), [](const RequestMetrics& r) { return r.id == 0; });
    ASSERT_NE(silent_request, m.requests.end());
    if (!silent_request->finish_reason.empty()) {
      EXPECT_EQ(silent_request->finish_reason, "abort");
      EXPECT_LT(silent_request->generation_tokens, 1900) << "cut off before its end";
      break;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the silent client was never cut off";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// curl -N (no buffering) reads the stream as it comes: data lines in order, ending with [DONE], whose
// deltas make the whole answer.
TEST(OpenAiServer, CurlReadsTheStream) {
  Served s;
  json body = chat_body("Name three colours.", 12);
  const std::string whole = post(s.url("/v1/chat/completions"), body)["choices"][0]["message"]["content"];
  body["stream"] = true;
  const test::CliRun curl = test::run_cli("curl -sN " + s.url("/v1/chat/completions") + " -H 'Content-Type: application/json' -d '" +
                                              body.dump() + "'",
                                          "", test::Stderr::Dropped);
  ASSERT_EQ(curl.exit_code, 0) << curl.out;
  std::istringstream lines(curl.out);
  std::vector<std::string> data;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("data: ", 0) == 0) {
      data.push_back(line.substr(6));
    } else {
      EXPECT_TRUE(line.empty()) << "only data lines and blank separators: " << line;
    }
  }
  ASSERT_GE(data.size(), 3u) << curl.out;
  EXPECT_EQ(data.back(), "[DONE]");
  std::string text;
  for (size_t i = 0; i + 1 < data.size(); ++i) {
    const json chunk = json::parse(data[i]);
    const json& delta = chunk["choices"][0]["delta"];
    if (delta.contains("content")) text += delta["content"].get<std::string>();
  }
  EXPECT_EQ(text, whole);
}

// A second server on a port in use is refused, not bound beside the first (httplib's default
// SO_REUSEPORT would let the kernel share the port's connections between the two).
TEST(OpenAiServer, APortInUseIsRefused) {
  Served first;
  RequestStreams streams;
  EngineConfig config;
  config.context_length = 256;
  Engine engine(demo(), config, streams.callbacks());
  ServeOptions options;
  options.port = first.server().port();
  options.model_name = "demo";
  options.context_length = 256;
  try {
    OpenAiServer second(demo(), engine, streams, options);
    ADD_FAILURE() << "bound to port " << options.port << ", which the first server holds";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen on 127.0.0.1:" + std::to_string(options.port)), std::string::npos) << e.what();
  }
}

// A server that other machines could reach needs a key, whoever builds it (the CLI or the workbench).
TEST(OpenAiServer, AnAddressBeyondThisMachineAsksForAKey) {
  RequestStreams streams;
  EngineConfig config;
  config.context_length = 256;
  Engine engine(demo(), config, streams.callbacks());
  ServeOptions options;
  options.host = "0.0.0.0";
  options.port = 0;
  try {
    OpenAiServer open(demo(), engine, streams, options);
    ADD_FAILURE() << "listened on 0.0.0.0 without a key";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("0.0.0.0 opens the server beyond this machine"), std::string::npos) << e.what();
  }
  options.api_key = "s3cret";
  EXPECT_NO_THROW(OpenAiServer(demo(), engine, streams, options));
  EXPECT_TRUE(loopback_host("::1"));
  EXPECT_FALSE(loopback_host("192.168.1.5"));
}

// Stopping drains: a stream in flight runs to its end within the drain time, then serve() returns.
// Streams `body` and, once its first text has come, stops the server with `drain_s` to drain; the reply.
RemoteReply stopped_while_streaming(Served& s, json body, double drain_s) {
  body["stream"] = true;
  std::atomic<bool> started{false};
  RemoteStreamCallbacks cb;
  cb.on_content = [&](std::string_view, double) { started = true; };
  RemoteReply reply;
  std::thread client([&] { reply = stream_completion(endpoint(s), "/v1/chat/completions", body, cb); });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  s.server().stop(drain_s);
  client.join();
  return reply;
}

TEST(OpenAiServer, StoppingLetsARunningStreamFinish) {
  auto s = std::make_unique<Served>();
  const RemoteReply reply = stopped_while_streaming(*s, chat_body("Count from one to twenty.", 40), 60);
  EXPECT_EQ(reply.outcome, RemoteOutcome::Finished) << reply.error;
  EXPECT_FALSE(reply.finish_reason.empty()) << "it ran to its own end";
  s->wait();
  HttpRequest health;
  health.url = s->url("/health");
  health.connect_timeout_s = 1;
  EXPECT_THROW(http_perform(health), HttpError) << "no longer accepting";
}

// A stream still running when the drain time is up is cancelled, however fast its tokens come.
TEST(OpenAiServer, StoppingCancelsAStreamStillRunningAtTheDeadline) {
  auto s = std::make_unique<Served>();
  json body = chat_body("Tell me a story.", 1500);
  body["ignore_eos"] = true;
  const RemoteReply reply = stopped_while_streaming(*s, body, 0.2);
  EXPECT_NE(reply.finish_reason, "length") << "cut off at the deadline, not run to its 1500 tokens";
  s->wait();
  EXPECT_EQ(s->engine().metrics_snapshot().requests.back().finish_reason, "abort");
}

// serve-sim --endpoint replays a workload on it with the prompts the local run makes, and reads its
// counters under the Inferscope kind's names.
TEST(OpenAiServer, ServeSimReplaysAWorkloadOnIt) {
  Served s;
  const std::string workload = " --generate-workload 8 --prompt-len 8:16 --output-len 4:8 --seed 3 --json";
  const json remote = test::cli_json("serve-sim --endpoint " + s.url() + " --tokenizer " + test::demo_model_path() +
                                     " --max-concurrency 4" + workload);
  const json local = test::cli_json("serve-sim --model " + test::demo_model_path() + " --dry-run" + workload);
  EXPECT_EQ(remote["config"]["server"], "Inferscope");
  EXPECT_EQ(remote["requests_finished"], 8);
  ASSERT_EQ(remote["requests"].size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(remote["requests"][i]["prompt_tokens"], local["requests"][i]["prompt_tokens"]) << i;
    EXPECT_EQ(remote["requests"][i]["generation_tokens"], local["requests"][i]["generation_tokens"]) << i;
  }
  EXPECT_EQ(remote["decode_tokens"], local["output_tokens"]) << "the server's own counter over the run";
  EXPECT_GT(remote["steps"].get<double>(), 0) << "inferscope:steps_total";
  EXPECT_FALSE(remote["kv_cache_usage_perc_peak"].is_null()) << "vLLM's gauge, which llama-server lacks";
  EXPECT_FALSE(remote["num_preemptions"].is_null());
}

json get_json(const std::string& url, std::vector<std::string> headers = {}) {
  HttpRequest r;
  r.url = url;
  r.headers = std::move(headers);
  return json::parse(http_perform(r).body);
}

// /inferscope/v1/metrics is the engine's own snapshot as --metrics-json writes it (?after_s: only what
// came after), and /inferscope/v1/kv its block table while a stream runs.
TEST(OpenAiServer, TheEnginesOwnSnapshotIsServedAsJson) {
  Served s;
  for (int i = 0; i < 2; ++i) post(s.url("/v1/completions"), {{"prompt", "Once upon a time"}, {"max_tokens", 4}, {"temperature", 0}});
  // The last step is recorded after its request's answer; a block table is taken between steps, so
  // once it is back that step is recorded and the idle engine steps no more.
  ASSERT_TRUE(s.engine().kv_snapshot().has_value());
  const EngineMetricsSnapshot served = metrics_from_json(get_json(s.url(kEngineMetricsPath)), "served");
  const EngineMetricsSnapshot engine = s.engine().metrics_snapshot();
  EXPECT_EQ(served.num_steps, engine.num_steps);
  EXPECT_EQ(served.generation_tokens_total, 8);
  ASSERT_EQ(served.steps.size(), engine.steps.size());
  EXPECT_EQ(served.steps.back().time_s, engine.steps.back().time_s);
  ASSERT_EQ(served.requests.size(), 2u);
  EXPECT_EQ(served.requests[1].finish_reason, "length");
  EXPECT_EQ(served.requests[1].client, user_agent() + " at 127.0.0.1") << "who asked, for the timeline";
  EXPECT_EQ(served.kv.blocks_total, engine.kv.blocks_total);

  // Asked after the last step: nothing new.
  const std::string after = s.url(kEngineMetricsPath) + "?after_s=" + json(served.steps.back().time_s).dump();
  const EngineMetricsSnapshot none = metrics_from_json(get_json(after), "after");
  EXPECT_TRUE(none.steps.empty());
  EXPECT_TRUE(none.requests.empty());
  EXPECT_EQ(none.num_steps, engine.num_steps) << "the numbers are whole, only the lists are cut";
  const auto [bad, bad_error] = refused(s.url(kEngineMetricsPath) + "?after_s=soon", "", false);
  EXPECT_EQ(bad, 400);
  EXPECT_EQ(bad_error["error"]["param"], "after_s");

  // The block table while a long stream runs: its one sequence, its blocks owned by it.
  json body = chat_body("Tell me a story.", 1500);
  body["stream"] = true;
  body["ignore_eos"] = true;
  std::atomic<bool> cancel{false}, started{false};
  RemoteStreamCallbacks cb;
  cb.on_content = [&](std::string_view, double) { started = true; };
  std::thread client([&] { stream_completion(endpoint(s), "/v1/chat/completions", body, cb, &cancel); });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const KvSnapshot kv = kv_snapshot_from_json(get_json(s.url(kEngineKvPath)), "kv");
  cancel = true;
  client.join();
  EXPECT_EQ(kv.kind, "paged");
  ASSERT_EQ(kv.sequences.size(), 1u);
  EXPECT_GT(kv.sequences[0].length, 0);
  EXPECT_FALSE(kv.sequences[0].tokens.empty()) << "its token ids, for the block view's hover";
  EXPECT_EQ(kv.sequences[0].client, user_agent() + " at 127.0.0.1") << "who asked, for the block view";
  for (int32_t block : kv.sequences[0].block_table) EXPECT_EQ(kv.blocks[static_cast<size_t>(block)].owners, std::vector<SeqId>{kv.sequences[0].id});
}

TEST(OpenAiServer, TheEnginesSnapshotAsksTheKey) {
  ServeOptions options;
  options.api_key = "s3cret";
  Served s(options);
  EXPECT_EQ(refused(s.url(kEngineKvPath), "", false).first, 401) << "the block table holds every client's token ids";
  EXPECT_EQ(refused(s.url(kEngineMetricsPath), "", false).first, 401);
  EXPECT_NO_THROW(get_json(s.url(kEngineMetricsPath), {"Authorization: Bearer s3cret"}));
}

// The workbench's remote engine follows another Inferscope's engine as if it ran here: the server's
// steps and requests (other clients' too), and its block table.
TEST(OpenAiServer, TheRemoteEngineFollowsItsEngine) {
  Served s;
  const ServerInfo info = probe_server(endpoint(s));
  RemoteEngineOptions options;
  options.metrics_interval_s = 0.05;
  RemoteEngine remote(endpoint(s), info, {}, options);
  ASSERT_TRUE(remote.follows_engine());
  for (int i = 0; i < 3; ++i) post(s.url("/v1/completions"), {{"prompt", "Request " + std::to_string(i)}, {"max_tokens", 5}, {"temperature", 0}});
  // The engine's last step is recorded after its request's answer, and before a block table is taken.
  ASSERT_TRUE(s.engine().kv_snapshot().has_value());
  // Until the follower has caught up with the engine.
  const auto caught_up = [](const EngineMetricsSnapshot& e, const EngineMetricsSnapshot& f) {
    const auto ended = [](const EngineMetricsSnapshot& m) { return m.requests_finished == 3 && m.num_requests_running == 0; };
    return ended(e) && ended(f) && f.num_steps == e.num_steps && f.requests.size() == e.requests.size();
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  EngineMetricsSnapshot engine, followed;
  do {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "never caught up: " << followed.num_steps << " of " << engine.num_steps << " steps";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    followed = remote.metrics_snapshot();
    engine = s.engine().metrics_snapshot();
  } while (!caught_up(engine, followed));
  EXPECT_EQ(followed.source, remote.source());
  EXPECT_TRUE(followed.not_reported.empty()) << "every panel is filled";
  ASSERT_EQ(followed.steps.size(), engine.steps.size()) << "each step once, polled in pieces";
  for (size_t i = 0; i < engine.steps.size(); ++i) {
    EXPECT_EQ(followed.steps[i].time_s, engine.steps[i].time_s) << i;
    EXPECT_EQ(followed.steps[i].decode_tokens, engine.steps[i].decode_tokens) << i;
  }
  ASSERT_EQ(followed.requests.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(followed.requests[i].id, engine.requests[i].id);
    EXPECT_EQ(followed.requests[i].generation_tokens, 5);
  }
  const std::optional<KvSnapshot> kv = remote.kv_snapshot();
  ASSERT_TRUE(kv.has_value());
  EXPECT_EQ(kv->blocks.size(), s.engine().kv_snapshot()->blocks.size());
}

// The workbench's remote engine (and so its chat and dashboards) talks to our own server.
TEST(OpenAiServer, TheRemoteEngineChatsWithIt) {
  Served s;
  const ServerInfo info = probe_server(endpoint(s));
  ASSERT_FALSE(info.models.empty());
  EXPECT_EQ(info.models.front(), "demo");
  EXPECT_EQ(info.kind, ServerKind::Inferscope);
  EXPECT_EQ(info.context_length, 2048);
  std::mutex mu;
  std::condition_variable cv;
  std::string text;
  bool ended = false;
  EngineCallbacks cb;
  cb.on_token = [&](RequestId, std::string_view piece, TokenId, const TokenTiming&) {
    std::lock_guard lock(mu);
    text += piece;
  };
  cb.on_finished = [&](RequestId, StopReason) {
    std::lock_guard lock(mu);
    ended = true;
    cv.notify_all();
  };
  RemoteEngine remote(endpoint(s), info, cb);
  EngineRequest request;
  request.messages = {{"user", "Name three colours."}};
  request.max_tokens = 24;
  request.sampling.temperature = 0;
  remote.submit(request);
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return ended; }));
  EXPECT_EQ(text, post(s.url("/v1/chat/completions"), chat_body("Name three colours.", 24))["choices"][0]["message"]["content"]);
}

}  // namespace
}  // namespace inferscope
