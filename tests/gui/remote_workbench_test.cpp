// The workbench on a remote server, offscreen, against a scripted llama-server-like server: connecting
// replaces the welcome page, the top bar names the server, the chat streams its reply, the dashboard
// draws what /metrics reports and says what it does not, the block view shows the reported state
// instead of blocks, the toggles are off; opening a model goes back to the local engine. Against another
// Inferscope (inferscope-cli serve's server, in this process), the dashboards and the block view show
// its engine's own steps and blocks, other clients' requests included.
#include <QComboBox>
#include <qcustomplot.h>

#include <atomic>
#include <thread>

#include "core/engine/engine.h"
#include "core/model/llama_model.h"
#include "core/remote/http_client.h"
#include "core/remote/remote_endpoint.h"
#include "core/remote/server_probe.h"
#include "core/server/openai_server.h"
#include "gui/blocks/block_table_view.h"
#include "gui/chat/chat_render.h"
#include "gui/chat/chat_session.h"
#include "gui/config/config_panel.h"
#include "gui/dashboard/metrics_dashboard.h"
#include "tests/gui/workbench_fixture.h"
#include "tests/support/canned_http_server.h"
#include "tests/support/test_models.h"

namespace inferscope::gui::test {
namespace {

using inferscope::test::CannedHttpServer;
using inferscope::test::CannedRequest;
using inferscope::test::CannedResponse;

// A llama-server: its counters grow with every scrape; chat replies "Paris." in two chunks.
CannedResponse llama_server(const CannedRequest& r, std::atomic<int>& scrapes) {
  if (r.path == "/slots") {
    return inferscope::test::canned(R"([{"id":0,"n_ctx":512,"is_processing":false},{"id":1,"n_ctx":512,"is_processing":true,)"
                                    R"("n_prompt_tokens_processed":20,"n_prompt_tokens_cache":10,"next_token":[{"n_decoded":5}]}])");
  }
  if (r.path == "/metrics") {
    ++scrapes;
    return inferscope::test::canned("llamacpp:prompt_tokens_total " + std::to_string(12 * scrapes) + "\nllamacpp:tokens_predicted_total " +
                                        std::to_string(3 * scrapes) + "\nllamacpp:n_decode_total " + std::to_string(3 * scrapes) +
                                        "\nllamacpp:requests_processing 1\n",
                                    200, "text/plain");
  }
  return inferscope::test::canned_sse({R"({"choices":[{"index":0,"delta":{"content":"Par"}}]})",
                                      R"({"choices":[{"index":0,"delta":{"content":"is."}}]})",
                                      R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})",
                                      R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3}})", "[DONE]"});
}

QString plot_note(QCustomPlot* plot) {
  for (int i = 0; i < plot->itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(plot->item(i)); text && text->objectName().isEmpty()) return text->text();
  return {};
}

TEST(RemoteWorkbench, ChatsWithAServerAndShowsWhatItsMetricsReport) {
  std::atomic<int> scrapes{0};
  CannedHttpServer server([&](const CannedRequest& r) { return llama_server(r, scrapes); });
  QTemporaryDir sessions;
  auto w = open_window(sessions.path());
  ASSERT_TRUE(w->showing_welcome());
  ServerInfo info;
  info.kind = ServerKind::LlamaCpp;
  info.models = {"smollm"};
  w->bridge().connect_remote(make_endpoint(server.url(), "", "smollm"), info);
  const QString source = "llama.cpp at " + QString::fromStdString(server.url());
  ASSERT_TRUE(wait_for([&] { return !w->showing_welcome(); }, 5000));
  EXPECT_TRUE(w->windowTitle().contains(source)) << w->windowTitle().toStdString();
  EXPECT_FALSE(w->config_panel()->isEnabled());
  EXPECT_EQ(w->chat()->context_text(), "context: the server's");
  EXPECT_FALSE(w->chat()->findChild<QComboBox*>("context_policy")->isEnabled()) << "the server keeps its own context";
  EXPECT_EQ(w->chat()->template_notice_text(), "") << "the server applies its own template";

  ASSERT_TRUE(chat_turn(*w, "What is the capital of France?", 10000));
  const ChatSession& session = w->chat()->session(w->chat()->current_index());
  ASSERT_EQ(session.messages.size(), 2u);
  EXPECT_EQ(session.messages[1].content, "Paris.");
  // The reply's counts are the server's usage (three tokens in two chunks).
  ASSERT_FALSE(session.timeline.empty());
  EXPECT_EQ(session.timeline.back().tokens, 3);
  EXPECT_EQ(session.timeline.back().prompt_tokens, 12);
  EXPECT_GT(session.timeline.back().ttft_s, 0);
  EXPECT_TRUE(w->status_text().contains("KV not reported")) << w->status_text().toStdString();

  // The dashboard draws the server's throughput and says what it does not report.
  ASSERT_TRUE(wait_for([&] { return scrapes >= 3 && plot_note(w->dashboard()->plot("kv_usage")).contains("does not report"); }, 10000));
  EXPECT_TRUE(plot_note(w->dashboard()->plot("kv_usage")).startsWith(source));
  EXPECT_TRUE(plot_note(w->dashboard()->plot("attention")).contains("does not report"));
  EXPECT_TRUE(plot_note(w->dashboard()->plot("ttft")).isEmpty());  // measured on the client
  EXPECT_TRUE(w->block_table()->remote_text().contains(source + " does not report KV usage")) << w->block_table()->remote_text().toStdString();
  EXPECT_TRUE(w->block_table()->remote_text().contains("slot 0: idle (context 512) · slot 1: 35 of 512 tokens"))
      << w->block_table()->remote_text().toStdString();

  // Opening a model goes back to the local engine.
  w->open_model(QString::fromStdString(::inferscope::test::shared_model_path("stories260K.gguf")));
  ASSERT_TRUE(wait_for([&] { return w->bridge().model() != nullptr; }, 30000));
  EXPECT_FALSE(w->bridge().remote());
  EXPECT_TRUE(w->config_panel()->isEnabled());
  ASSERT_TRUE(wait_for([&] { return w->block_table()->remote_text().isEmpty(); }, 10000));
}

// Another Inferscope on the demo model: a 1500-token stream from another client shows as a sequence
// of the server's block table in the block view, and its steps on the dashboards.
TEST(RemoteWorkbench, FollowsAnotherInferscopesEngine) {
  const std::unique_ptr<LlamaModel> model = LlamaModel::load(::inferscope::test::demo_model_path());
  RequestStreams streams;
  EngineConfig config;
  config.context_length = 2048;
  Engine engine(*model, config, streams.callbacks());
  ServeOptions options;
  options.port = 0;
  options.model_name = "demo";
  options.context_length = 2048;
  OpenAiServer server(*model, engine, streams, options);
  std::thread serving([&] { server.serve(); });

  QTemporaryDir sessions;
  auto w = open_window(sessions.path());
  const RemoteEndpoint endpoint = make_endpoint(server.url(), "", "demo");
  const ServerInfo info = probe_server(endpoint);
  ASSERT_EQ(info.kind, ServerKind::Inferscope);
  w->bridge().connect_remote(endpoint, info);
  ASSERT_TRUE(wait_for([&] { return !w->showing_welcome(); }, 5000));

  std::thread other_client([&] {
    HttpRequest r;
    r.url = server.url() + "/v1/completions";
    r.post = true;
    r.body = R"({"prompt": "Once upon a time", "max_tokens": 1500, "ignore_eos": true})";
    r.total_timeout_s = 300;
    try {
      http_perform(r);
    } catch (const HttpError& e) {
      ADD_FAILURE() << e.what();
    }
  });
  // The block table and the first polled steps.
  const bool seen = wait_for([&] {
    return w->block_table()->summary_text().contains("1 sequences") && plot_note(w->dashboard()->plot("kv_usage")).isEmpty();
  }, 30000);
  const QString summary = w->block_table()->summary_text();
  const QString remote_text = w->block_table()->remote_text();
  engine.cancel(0);
  other_client.join();
  server.stop(0);
  serving.join();
  ASSERT_TRUE(seen) << summary.toStdString();
  EXPECT_TRUE(summary.startsWith("paged")) << summary.toStdString();
  EXPECT_TRUE(remote_text.isEmpty()) << "blocks, not a server's statement: " << remote_text.toStdString();
  EXPECT_TRUE(plot_note(w->dashboard()->plot("attention")).isEmpty()) << "the server's attention time, step by step";
}

TEST(RemoteWorkbench, AServerErrorEndsTheTurnWithItsMessageAndKeepsTheText) {
  CannedHttpServer server([](const CannedRequest& r) {
    if (r.path == "/metrics") return inferscope::test::canned("not found", 404, "text/plain");
    return inferscope::test::canned(R"({"error":{"message":"the model is loading"}})", 503);
  });
  QTemporaryDir sessions;
  auto w = open_window(sessions.path());
  ServerInfo info;
  info.kind = ServerKind::Vllm;
  w->bridge().connect_remote(make_endpoint(server.url()), info);
  ASSERT_TRUE(chat_turn(*w, "hello?", 10000));
  EXPECT_TRUE(w->chat()->error_text().contains("HTTP 503: the model is loading")) << w->chat()->error_text().toStdString();
  EXPECT_EQ(w->chat()->input_text(), "hello?");  // the user's text is kept for another try
}

TEST(RemoteWorkbench, ReasoningIsShownApartFromTheAnswerAndSaved) {
  CannedHttpServer server([](const CannedRequest& r) {
    if (r.path == "/metrics") return inferscope::test::canned("not found", 404, "text/plain");
    return inferscope::test::canned_sse({R"({"choices":[{"index":0,"delta":{"reasoning_content":"The user asks 2+2."}}]})",
                                        R"({"choices":[{"index":0,"delta":{"reasoning_content":" That is 4."}}]})",
                                        R"({"choices":[{"index":0,"delta":{"content":"4"},"finish_reason":"stop"}]})", "[DONE]"});
  });
  QTemporaryDir sessions;
  auto w = open_window(sessions.path());
  ServerInfo info;
  info.kind = ServerKind::Vllm;
  w->bridge().connect_remote(make_endpoint(server.url()), info);
  ASSERT_TRUE(chat_turn(*w, "What is 2+2?", 10000));
  const int index = w->chat()->current_index();
  const SessionMessage& reply = w->chat()->session(index).messages.at(1);
  EXPECT_EQ(reply.content, "4");
  EXPECT_EQ(reply.reasoning, "The user asks 2+2. That is 4.");
  // Saved with the session, and only the answer goes back to the server as history.
  const ChatSession reloaded = session_from_json(session_to_json(w->chat()->session(index)), "session");
  EXPECT_EQ(reloaded.messages.at(1).reasoning, reply.reasoning);
  EXPECT_EQ(reloaded.chat_messages().back().content, "4");
  EXPECT_TRUE(conversation_html(w->chat()->session(index), false, false).contains("Reasoning"));
}

}  // namespace
}  // namespace inferscope::gui::test
