// BackgroundServer: the workbench's Serve switch without the window. An engine built for a host front
// end (its own callbacks, as the chat's) serves HTTP clients beside the host's requests: each side
// hears only of its own, the served reply is generate --chat's, and a server that goes away cancels
// its streams and gives its port back.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/engine/engine.h"
#include "core/remote/http_client.h"
#include "core/remote/remote_completion.h"
#include "core/server/background_server.h"
#include "core/version/version.h"
#include "tests/support/cli_runner.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

using nlohmann::json;

std::shared_ptr<const LlamaModel> demo() {
  static const std::shared_ptr<const LlamaModel> model = LlamaModel::load(test::demo_model_path());
  return model;
}

// What the host front end heard, by request.
struct HostLog {
  std::mutex mu;
  std::map<RequestId, std::string> text;
  std::map<RequestId, StopReason> finished;
  EngineCallbacks callbacks() {
    EngineCallbacks cb;
    cb.on_token = [this](RequestId id, std::string_view piece, TokenId, const TokenTiming&) {
      std::lock_guard lock(mu);
      text[id] += piece;
    };
    cb.on_finished = [this](RequestId id, StopReason reason) {
      std::lock_guard lock(mu);
      finished[id] = reason;
    };
    return cb;
  }
  size_t ended() {
    std::lock_guard lock(mu);
    return finished.size();
  }
};

// The host's engine on the demo model, with its router.
struct HostEngine {
  HostLog log;
  std::shared_ptr<CallbackRouter> router = std::make_shared<CallbackRouter>(log.callbacks());
  std::shared_ptr<Engine> engine;
  HostEngine() {
    EngineConfig config;
    config.context_length = 2048;
    engine = std::make_shared<Engine>(*demo(), config, router->callbacks());
  }
  std::unique_ptr<BackgroundServer> serve(int32_t port = 0) {
    ServeOptions options;
    options.port = port;
    options.context_length = 2048;
    return std::make_unique<BackgroundServer>(demo(), engine, router, options);
  }
};

// A streamed chat request at temperature 0.
json chat_body(const std::string& content, int max_tokens) {
  return {{"messages", json::array({{{"role", "user"}, {"content", content}}})},
          {"max_tokens", max_tokens},
          {"temperature", 0},
          {"stream", true}};
}

TEST(BackgroundServer, ServesBesideTheHostsOwnRequests) {
  HostEngine host;
  const std::unique_ptr<BackgroundServer> server = host.serve();
  EngineRequest own;
  own.messages = {{"user", "Name three colours."}};
  own.max_tokens = 24;
  own.sampling.temperature = 0;
  const RequestId own_id = host.engine->submit(own);
  const RemoteReply served = stream_completion({server->url(), "", ""}, "/v1/chat/completions", chat_body("Name three colours.", 24));
  ASSERT_EQ(served.outcome, RemoteOutcome::Finished) << served.error;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (host.log.ended() == 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const json generated = test::cli_json("generate -m " + test::demo_model_path() + " --chat 'Name three colours.' -n 24 --json");
  EXPECT_EQ(served.text, generated["text"].get<std::string>()) << "the client's reply is generate's";
  {
    std::lock_guard lock(host.log.mu);
    EXPECT_EQ(host.log.text[own_id], served.text) << "and so is the host's, batched beside it";
    EXPECT_EQ(host.log.finished.size(), 1u) << "the host hears nothing of the client's request";
    EXPECT_EQ(host.log.text.size(), 1u);
  }
  EXPECT_EQ(host.router->guest_counts().submitted, 1);
  // Named by default as its file is, without .gguf.
  HttpRequest models;
  models.url = server->url() + "/v1/models";
  EXPECT_EQ(json::parse(http_perform(models).body)["data"][0]["id"], std::filesystem::path(test::demo_model_path()).stem().string());
  EXPECT_EQ(host.router->guest_counts().in_flight, 0);
  // The engine's metrics hold both, the client's labelled with who asked.
  const EngineMetricsSnapshot m = host.engine->metrics_snapshot();
  ASSERT_EQ(m.requests.size(), 2u);
  EXPECT_EQ(m.requests[0].client, "");
  EXPECT_EQ(m.requests[1].client, user_agent() + " at 127.0.0.1");
}

TEST(BackgroundServer, GoingAwayCancelsItsStreamsAndGivesThePortBack) {
  HostEngine host;
  auto server = host.serve();
  const std::string url = server->url();
  const int32_t port = std::stoi(url.substr(url.rfind(':') + 1));
  json body = chat_body("Tell me a story.", 1500);
  body["ignore_eos"] = true;
  std::atomic<bool> started{false};
  RemoteStreamCallbacks cb;
  cb.on_content = [&](std::string_view, double) { started = true; };
  RemoteReply reply;
  std::thread client([&] { reply = stream_completion({url, "", ""}, "/v1/chat/completions", body, cb); });
  while (!started) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  server.reset();
  client.join();
  EXPECT_NE(reply.finish_reason, "length") << "cut short, not run to its end";
  // Its cancel was queued before the server was gone: a block table, taken between steps, comes after it.
  const std::optional<KvSnapshot> kv = host.engine->kv_snapshot();
  ASSERT_TRUE(kv.has_value());
  EXPECT_TRUE(kv->sequences.empty()) << "and its blocks are free";
  EXPECT_EQ(host.engine->metrics_snapshot().requests.back().finish_reason, "abort");
  EXPECT_EQ(host.router->guest_counts().in_flight, 0) << "its request has ended";
  // The port is free for the next server, on the same engine.
  server = host.serve(port);
  EXPECT_EQ(server->url(), url);
  const RemoteReply again = stream_completion({url, "", ""}, "/v1/chat/completions", chat_body("Hi", 4));
  EXPECT_EQ(again.outcome, RemoteOutcome::Finished) << again.error;
  EXPECT_EQ(host.log.ended(), 0u) << "the host never heard of either";
}

}  // namespace
}  // namespace inferscope
