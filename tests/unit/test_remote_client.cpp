// The remote client against a scripted local server: plain requests, error statuses, dead ports,
// silences, streams split anywhere, errors and garbage mid-stream, cut bodies and cancellation.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>

#include "core/remote/http_client.h"
#include "core/remote/metric_snapshot.h"
#include "core/remote/remote_completion.h"
#include "core/remote/remote_request.h"
#include "core/remote/remote_workload.h"
#include "core/remote/server_probe.h"
#include "tests/support/canned_http_server.h"

namespace inferscope {
namespace {

using test::CannedHttpServer;
using test::CannedRequest;
using test::CannedResponse;

// An SSE stream of chat chunks, split at awkward places: inside "data:", between "\r" and "\n".
CannedResponse chat_stream(std::vector<std::string> events) {
  std::string all;
  for (const std::string& e : events) all += "data: " + e + "\r\n\r\n";
  CannedResponse r;
  r.content_type = "text/event-stream";
  for (size_t at = 0; at < all.size(); at += 7) r.chunks.push_back(all.substr(at, 7));
  return r;
}

std::string delta(const std::string& text) {
  return R"({"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":")" + text + R"("}}]})";
}

RemoteReply stream_from(const CannedHttpServer& server, const std::atomic<bool>* cancel = nullptr,
                        const RemoteTimeouts& timeouts = {}, const RemoteStreamCallbacks& callbacks = {}) {
  const RemoteEndpoint endpoint = make_endpoint(server.url(), "sk-test", "demo");
  const nlohmann::json body = chat_request_body(endpoint, ServerKind::Vllm, {{"user", "hi"}}, SamplingParams{}, 16);
  return stream_completion(endpoint, "/v1/chat/completions", body, callbacks, cancel, timeouts);
}

// The error a request ends with (a failed test when it succeeds).
HttpError error_of(const HttpRequest& request) {
  try {
    http_perform(request);
  } catch (const HttpError& e) {
    return e;
  }
  ADD_FAILURE() << request.url << ": no error";
  return HttpError(HttpFailure::Transfer, "no error");
}

TEST(HttpClient, GetsABodyAndSendsTheApiKey) {
  CannedHttpServer server([](const CannedRequest&) { return test::canned(R"({"ok":true})"); });
  HttpRequest request;
  request.url = server.url() + "/v1/models";
  request.headers = endpoint_headers(make_endpoint(server.url(), "sk-secret"));
  const HttpResponse response = http_perform(request);
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, R"({"ok":true})");
  EXPECT_EQ(response.content_type, "application/json");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_EQ(server.requests()[0].path, "/v1/models");
  EXPECT_NE(server.requests()[0].headers.find("Authorization: Bearer sk-secret"), std::string::npos);
}

TEST(HttpClient, AnErrorStatusQuotesTheServersMessage) {
  CannedHttpServer server([](const CannedRequest&) {
    return test::canned(R"({"error":{"message":"model 'x' not found","type":"invalid_request_error","code":404}})", 500);
  });
  HttpRequest request;
  request.url = server.url() + "/v1/chat/completions";
  request.post = true;
  request.body = "{}";
  const HttpError e = error_of(request);
  EXPECT_EQ(e.failure(), HttpFailure::Status);
  EXPECT_EQ(e.status(), 500);
  EXPECT_NE(std::string(e.what()).find("POST " + request.url + ": HTTP 500: model 'x' not found"), std::string::npos) << e.what();
}

TEST(HttpClient, ADeadPortIsAConnectionErrorNamingTheUrl) {
  HttpRequest request;
  request.url = "http://127.0.0.1:" + std::to_string(test::unused_port()) + "/health";
  const HttpError e = error_of(request);
  EXPECT_EQ(e.failure(), HttpFailure::Connect);
  EXPECT_NE(std::string(e.what()).find("GET " + request.url + ": could not connect"), std::string::npos) << e.what();
}

TEST(HttpClient, ASilentServerTimesOut) {
  CannedHttpServer server([](const CannedRequest&) {
    CannedResponse r = test::canned("late");
    r.silence_before_ms = 2500;
    return r;
  });
  HttpRequest request;
  request.url = server.url() + "/metrics";
  request.idle_timeout_s = 1;
  EXPECT_EQ(error_of(request).failure(), HttpFailure::Timeout);
}

TEST(HttpClient, ACutBodyIsATransferError) {
  CannedHttpServer server([](const CannedRequest&) {
    CannedResponse r = test::canned("# TYPE vllm:num_requests_running gauge\nvllm:num_req", 200, "text/plain");
    r.content_length = 4000;
    return r;
  });
  HttpRequest request;
  request.url = server.url() + "/metrics";
  EXPECT_EQ(error_of(request).failure(), HttpFailure::Transfer);
}

TEST(HttpClient, ATruncatedMetricsBodyIsAParseErrorNamingTheLine) {
  CannedHttpServer server([](const CannedRequest&) {
    return test::canned("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m", 200, "text/plain");
  });
  HttpRequest request;
  request.url = server.url() + "/metrics";
  const HttpResponse response = http_perform(request);
  try {
    MetricSnapshot::parse(response.body);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

TEST(RemoteCompletion, AssemblesAStreamSplitAnywhere) {
  CannedHttpServer server([](const CannedRequest&) {
    return chat_stream({delta("Hel"), delta("lo"), R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
                        R"({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3}})", "[DONE]"});
  });
  std::string streamed;
  RemoteStreamCallbacks callbacks;
  callbacks.on_content = [&](std::string_view text, double) { streamed += text; };
  const RemoteReply reply = stream_from(server, nullptr, {}, callbacks);
  EXPECT_EQ(reply.outcome, RemoteOutcome::Finished) << reply.error;
  EXPECT_EQ(reply.text, "Hello");
  EXPECT_EQ(streamed, "Hello");
  EXPECT_EQ(reply.finish_reason, "stop");
  ASSERT_TRUE(reply.usage.has_value());
  EXPECT_EQ(reply.usage->completion_tokens, 3);  // from usage: two chunks carried three tokens
  EXPECT_GT(reply.timing.time_to_first_token_s, 0);
  EXPECT_EQ(reply.timing.chunk_gaps_s.size(), 1u);
  EXPECT_GE(reply.timing.e2e_s, reply.timing.time_to_first_token_s);
  // The request asked for a stream with the usage chunk.
  const nlohmann::json sent = nlohmann::json::parse(server.requests().at(0).body);
  EXPECT_TRUE(sent["stream"].get<bool>());
  EXPECT_TRUE(sent["stream_options"]["include_usage"].get<bool>());
  EXPECT_EQ(sent["model"], "demo");
}

TEST(RemoteCompletion, AServerErrorMidStreamFailsAndKeepsTheText) {
  CannedHttpServer server([](const CannedRequest&) {
    return chat_stream({delta("Par"), R"({"error":{"message":"KV cache exhausted","code":"503"}})"});
  });
  const RemoteReply reply = stream_from(server);
  EXPECT_EQ(reply.outcome, RemoteOutcome::Failed);
  EXPECT_EQ(reply.text, "Par");
  EXPECT_NE(reply.error.find("the server reported an error: KV cache exhausted (code 503)"), std::string::npos) << reply.error;
  EXPECT_NE(reply.error.find("/v1/chat/completions"), std::string::npos) << reply.error;
}

TEST(RemoteCompletion, MalformedJsonFailsAndKeepsTheText) {
  CannedHttpServer server([](const CannedRequest&) { return chat_stream({delta("ok"), "{\"choices\": [", "[DONE]"}); });
  const RemoteReply reply = stream_from(server);
  EXPECT_EQ(reply.outcome, RemoteOutcome::Failed);
  EXPECT_EQ(reply.text, "ok");
  EXPECT_NE(reply.error.find("malformed stream"), std::string::npos) << reply.error;
}

TEST(RemoteCompletion, AStreamCutBeforeDoneFails) {
  CannedHttpServer server([](const CannedRequest&) { return chat_stream({delta("a"), delta("b")}); });
  const RemoteReply reply = stream_from(server);
  EXPECT_EQ(reply.outcome, RemoteOutcome::Failed);
  EXPECT_EQ(reply.text, "ab");
  EXPECT_NE(reply.error.find("[DONE]"), std::string::npos) << reply.error;
}

TEST(RemoteCompletion, AnHttpErrorBeforeTheStreamFails) {
  CannedHttpServer server([](const CannedRequest&) { return test::canned("upstream down", 502, "text/plain"); });
  const RemoteReply reply = stream_from(server);
  EXPECT_EQ(reply.outcome, RemoteOutcome::Failed);
  EXPECT_NE(reply.error.find("HTTP 502: upstream down"), std::string::npos) << reply.error;
}

TEST(RemoteCompletion, CancelClosesTheConnectionPromptly) {
  CannedHttpServer server([](const CannedRequest&) {
    CannedResponse r = chat_stream({delta("first")});
    r.hold_until_client_closes = true;
    return r;
  });
  std::atomic<bool> cancel{false};
  RemoteStreamCallbacks callbacks;
  callbacks.on_content = [&](std::string_view, double) { cancel = true; };
  const auto start = std::chrono::steady_clock::now();
  const RemoteReply reply = stream_from(server, &cancel, {}, callbacks);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(reply.outcome, RemoteOutcome::Cancelled);
  EXPECT_EQ(reply.text, "first");
  EXPECT_TRUE(server.wait_for_hang_up(2000));
}

TEST(RemoteCompletion, ACancelWhileTheServerIsSilentIsSeen) {
  CannedHttpServer server([](const CannedRequest&) {
    CannedResponse r = chat_stream({});
    r.hold_until_client_closes = true;
    return r;
  });
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  const RemoteReply reply = stream_from(server, &cancel);
  canceller.join();
  EXPECT_EQ(reply.outcome, RemoteOutcome::Cancelled);
  EXPECT_LT(reply.timing.e2e_s, 1.5);
}

TEST(RemoteRequest, MapsSamplingToEachServersFields) {
  SamplingParams s;
  s.temperature = 0.7f;
  s.top_k = 40;
  s.top_p = 0.9f;
  s.min_p = 0.05f;
  s.repeat_penalty = 1.1f;
  s.seed = 7;
  const RemoteEndpoint e = make_endpoint("http://h:1");
  const nlohmann::json llama = chat_request_body(e, ServerKind::LlamaCpp, {{"system", "be brief"}, {"user", "hi"}}, s, 32);
  EXPECT_FLOAT_EQ(llama["repeat_penalty"].get<float>(), 1.1f);
  EXPECT_FALSE(llama.contains("repetition_penalty"));
  EXPECT_FALSE(llama.contains("model"));
  EXPECT_EQ(llama["messages"].size(), 2u);
  EXPECT_EQ(llama["messages"][0]["role"], "system");
  const nlohmann::json vllm = chat_request_body(e, ServerKind::Vllm, {{"user", "hi"}}, s, 32);
  EXPECT_FLOAT_EQ(vllm["repetition_penalty"].get<float>(), 1.1f);
  EXPECT_EQ(vllm["top_k"], 40);
  EXPECT_FLOAT_EQ(vllm["top_p"].get<float>(), 0.9f);
  EXPECT_FLOAT_EQ(vllm["min_p"].get<float>(), 0.05f);
  EXPECT_EQ(vllm["seed"], 7);
  EXPECT_EQ(vllm["max_tokens"], 32);
  // Greedy defaults send no filters the server would have to interpret.
  const nlohmann::json greedy = chat_request_body(e, ServerKind::Vllm, {{"user", "hi"}}, SamplingParams{}, 8);
  EXPECT_EQ(greedy["temperature"], 0.0);
  for (const char* key : {"top_k", "top_p", "min_p", "repetition_penalty", "ignore_eos"}) EXPECT_FALSE(greedy.contains(key)) << key;
  SamplingParams bench;
  bench.ignore_eos = true;
  const nlohmann::json tokens = completion_request_body(e, ServerKind::LlamaCpp, std::vector<int32_t>{1, 2, 3}, bench, 64);
  EXPECT_EQ(tokens["prompt"], nlohmann::json::array({1, 2, 3}));
  EXPECT_TRUE(tokens["ignore_eos"].get<bool>());
  const nlohmann::json open_ended = completion_request_body(e, ServerKind::LlamaCpp, "Once upon", SamplingParams{}, -1);
  EXPECT_EQ(open_ended["prompt"], "Once upon");
  EXPECT_FALSE(open_ended.contains("max_tokens"));
}

TEST(RemoteEndpoint, NormalisesAndRejectsUrls) {
  EXPECT_EQ(make_endpoint("http://gpu-box:8000/v1/").base_url, "http://gpu-box:8000");
  EXPECT_EQ(make_endpoint("https://api.example.com/proxy").base_url, "https://api.example.com/proxy");
  EXPECT_EQ(endpoint_url(make_endpoint("http://h:1/"), "/metrics"), "http://h:1/metrics");
  EXPECT_TRUE(endpoint_headers(make_endpoint("http://h:1")).empty());
  for (const char* bad : {"localhost:8080", "ftp://h/", "http://", "http://h:1/?x=1", "http://h :1"}) {
    EXPECT_THROW(make_endpoint(bad), std::invalid_argument) << bad;
  }
  try {
    make_endpoint("localhost:8080");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'localhost:8080'"), std::string::npos) << e.what();
  }
}

TEST(ServerProbe, TellsTheKindFromModelsPropsOrMetrics) {
  const ServerInfo vllm = read_models_list(R"({"object":"list","data":[{"id":"Qwen/Qwen3-8B","owned_by":"vllm","max_model_len":32768}]})");
  EXPECT_EQ(vllm.kind, ServerKind::Vllm);
  EXPECT_EQ(vllm.models, std::vector<std::string>{"Qwen/Qwen3-8B"});
  EXPECT_EQ(vllm.context_length, 32768);
  EXPECT_EQ(read_models_list(R"({"data":[{"id":"m","owned_by":"sglang"}]})").kind, ServerKind::Sglang);
  EXPECT_EQ(read_models_list(R"({"data":[{"id":"m","owned_by":"inferscope"}]})").kind, ServerKind::Inferscope);
  EXPECT_EQ(server_kind_name(ServerKind::Inferscope), "Inferscope");
  EXPECT_THROW(read_models_list(R"({"models":[]})"), std::runtime_error);
  EXPECT_THROW(read_models_list(R"({"data":[{"name":"m"}]})"), std::runtime_error);

  ServerInfo info = read_models_list(R"({"data":[{"id":"smollm2","owned_by":"someone"}]})");
  EXPECT_EQ(info.kind, ServerKind::Unknown);
  EXPECT_TRUE(read_llama_props(R"({"total_slots":4,"default_generation_settings":{"n_ctx":2048},"build_info":"b1-abc"})", info));
  EXPECT_EQ(info.kind, ServerKind::LlamaCpp);
  EXPECT_EQ(info.detected_by, "/props");
  EXPECT_EQ(info.slot_count, 4);
  EXPECT_EQ(info.context_length, 2048);
  EXPECT_FALSE(read_llama_props(R"({"detail":"Not Found"})", info));

  EXPECT_EQ(kind_from_metrics(MetricSnapshot::parse("# TYPE sglang:token_usage gauge\nsglang:token_usage 0.5\n")), ServerKind::Sglang);
  EXPECT_EQ(kind_from_metrics(MetricSnapshot::parse("process_cpu_seconds_total 3\n")), ServerKind::Unknown);
}

TEST(ServerProbe, AsksTheServer) {
  CannedHttpServer server([](const CannedRequest& r) {
    if (r.path == "/v1/models") return test::canned(R"({"data":[{"id":"smollm2","owned_by":"llamacpp"}]})");
    if (r.path == "/props") return test::canned(R"({"total_slots":2,"default_generation_settings":{"n_ctx":512}})");
    return test::canned("not found", 404, "text/plain");
  });
  const ServerInfo info = probe_server(make_endpoint(server.url()));
  EXPECT_EQ(info.kind, ServerKind::LlamaCpp);
  EXPECT_EQ(info.detected_by, "/v1/models");
  EXPECT_EQ(info.slot_count, 2);
  EXPECT_EQ(info.context_length, 512);
  EXPECT_THROW(probe_server(make_endpoint("http://127.0.0.1:" + std::to_string(test::unused_port()))), HttpError);
}

std::string release_scrape(const std::string& folder) {
  std::ifstream in(std::string(INFERSCOPE_SOURCE_DIR) + "/tests/fixtures/metrics/releases/" + folder + "/scrape2.txt", std::ios::binary);
  std::stringstream body;
  body << in.rdbuf();
  return body.str();
}

// The Connect dialog's check says which releases the server's metric names fit and what it does not
// publish, from the same /metrics the dashboard reads.
TEST(ServerProbe, NamesTheReleasesItsMetricsFit) {
  CannedHttpServer vllm([](const CannedRequest& r) {
    if (r.path == "/v1/models") return test::canned(R"({"data":[{"id":"Qwen/Qwen3-8B","owned_by":"vllm","max_model_len":4096}]})");
    if (r.path == "/metrics") return test::canned(release_scrape("vllm-0.9.1-single"), 200, "text/plain");
    return test::canned("not found", 404, "text/plain");
  });
  const ServerInfo old_vllm = probe_server(make_endpoint(vllm.url()));
  EXPECT_EQ(old_vllm.metrics_release, "vLLM 0.9.1");
  EXPECT_EQ(old_vllm.metrics_unpublished, "");
  CannedHttpServer llama([](const CannedRequest& r) {
    if (r.path == "/v1/models") return test::canned(R"({"data":[{"id":"smollm2","owned_by":"llamacpp"}]})");
    if (r.path == "/metrics") return test::canned(release_scrape("llama-server-0.3.36-single"), 200, "text/plain");
    return test::canned("not found", 404, "text/plain");
  });
  const ServerInfo info = probe_server(make_endpoint(llama.url()));
  EXPECT_EQ(info.metrics_release, "llama.cpp (llama-cpp-python 0.3.36)");
  EXPECT_NE(info.metrics_unpublished.find("KV cache usage"), std::string::npos) << info.metrics_unpublished;
  EXPECT_NE(info.metrics_unpublished.find("time to first token"), std::string::npos) << info.metrics_unpublished;
  // Without --metrics llama-server answers 404: the check says nothing of releases.
  CannedHttpServer bare([](const CannedRequest& r) {
    if (r.path == "/v1/models") return test::canned(R"({"data":[{"id":"smollm2","owned_by":"llamacpp"}]})");
    return test::canned("not found", 404, "text/plain");
  });
  EXPECT_EQ(probe_server(make_endpoint(bare.url())).metrics_release, "");
}

// A cancel while /props is pending ends the probe as cancelled; it is not taken for "no /props here".
TEST(ServerProbe, ACancelEndsTheProbeEvenDuringTheOptionalQuestions) {
  CannedHttpServer server([](const CannedRequest& r) {
    if (r.path == "/v1/models") return test::canned(R"({"data":[{"id":"smollm2","owned_by":"llamacpp"}]})");
    CannedResponse silent = test::canned("{}");
    silent.hold_until_client_closes = true;
    return silent;
  });
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    while (server.requests().size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    cancel = true;
  });
  try {
    probe_server(make_endpoint(server.url()), 5, &cancel);
    ADD_FAILURE() << "a cancelled probe returned";
  } catch (const HttpError& e) {
    EXPECT_EQ(e.failure(), HttpFailure::Cancelled) << e.what();
  }
  canceller.join();
}

TEST(RemoteWorkload, SendsEachRequestAtItsArrivalAndKeepsFailuresApart) {
  std::atomic<int> metrics_scrapes{0};
  CannedHttpServer server([&](const CannedRequest& r) {
    if (r.path == "/metrics") {
      const int n = ++metrics_scrapes;
      return test::canned("# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total " + std::to_string(100 * n) +
                        "\nllamacpp:requests_processing 1\n",
                    200, "text/plain");
    }
    const nlohmann::json body = nlohmann::json::parse(r.body);
    if (body["prompt"] == nlohmann::json::array({13})) return test::canned(R"({"error":{"message":"prompt too long"}})", 500);
    return chat_stream({R"({"choices":[{"index":0,"text":"ok","finish_reason":"length"}]})",
                        R"({"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":)" + body["max_tokens"].dump() + "}}", "[DONE]"});
  });
  const std::vector<RemoteWorkloadRequest> requests = {{0, 0.0, {7}, 3}, {1, 0.2, {13}, 2}, {2, 0.1, {9}, 5}};
  RemoteWorkloadOptions options;
  options.max_concurrency = 1;
  options.metrics_interval_s = 0.05;
  const RemoteWorkloadResult result = run_remote_workload(make_endpoint(server.url()), ServerKind::LlamaCpp, requests, options);
  ASSERT_EQ(result.requests.size(), 3u);
  EXPECT_EQ(result.requests[0].reply.outcome, RemoteOutcome::Finished);
  EXPECT_EQ(result.requests[0].reply.usage->completion_tokens, 3);
  EXPECT_EQ(result.requests[1].reply.outcome, RemoteOutcome::Failed);
  EXPECT_NE(result.requests[1].reply.error.find("HTTP 500: prompt too long"), std::string::npos) << result.requests[1].reply.error;
  EXPECT_EQ(result.requests[2].reply.usage->completion_tokens, 5);
  // Sent in arrival order, none before its time.
  for (const RemoteRequestResult& r : result.requests) EXPECT_GE(r.sent_s, r.arrival_s) << r.id;
  EXPECT_LT(result.requests[2].sent_s, result.requests[1].sent_s);
  // The counters' increase between the scrapes before and after the run; gauges sampled in between.
  ASSERT_TRUE(result.counters.has_value());
  EXPECT_EQ(result.counters->generation_tokens, 100.0 * (metrics_scrapes - 1));
  EXPECT_FALSE(result.samples.empty());
  EXPECT_EQ(result.samples.front().gauges.requests_running, 1);
  EXPECT_TRUE(result.metrics_error.empty());
}

TEST(RemoteWorkload, AServerWithoutMetricsStillRunsTheWorkload) {
  CannedHttpServer server([](const CannedRequest& r) {
    if (r.path == "/metrics") return test::canned("not found", 404, "text/plain");
    return chat_stream({R"({"choices":[{"index":0,"text":"x","finish_reason":"stop"}]})", "[DONE]"});
  });
  const RemoteWorkloadResult result = run_remote_workload(make_endpoint(server.url()), ServerKind::Unknown, {{0, 0.0, {1}, 1}});
  EXPECT_EQ(result.requests.at(0).reply.outcome, RemoteOutcome::Finished);
  EXPECT_FALSE(result.counters.has_value());
  EXPECT_NE(result.metrics_error.find("HTTP 404"), std::string::npos) << result.metrics_error;
}

}  // namespace
}  // namespace inferscope
