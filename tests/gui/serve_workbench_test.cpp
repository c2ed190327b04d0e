// The workbench's Serve switch on the demo model: an HTTP client's requests run on the chat's engine
// beside the chat's own, the status bar shows the URL and the counts, the timeline and the block
// view name the client, and the chat hears nothing of them. A configuration change acts on the
// clients' requests as on the chat's (recomputed on a new cache; a new thread count waits until
// they end, then the server goes on at the same URL). The settings dialog refuses what the server
// would refuse.
#include <QListWidget>
#include <QSignalSpy>
#include <QPushButton>
#include <QDialogButtonBox>
#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/remote/remote_completion.h"
#include "core/version/version.h"
#include "gui/app/status_fields.h"
#include "gui/blocks/block_table_view.h"
#include "gui/dashboard/metrics_dashboard.h"
#include "gui/dashboard/request_timeline.h"
#include "gui/serve/serve_dialog.h"
#include "tests/gui/workbench_fixture.h"

namespace inferscope::gui::test {
namespace {

using nlohmann::json;

json story(int max_tokens) {
  return {{"messages", json::array({{{"role", "user"}, {"content", "Tell me a story."}}})},
          {"max_tokens", max_tokens},
          {"temperature", 0},
          {"ignore_eos", true},
          {"stream", true}};
}

// A client streaming `body` on its own thread while the test's event loop runs.
struct Client {
  std::atomic<bool> started{false}, done{false};
  RemoteReply reply;
  std::thread thread;
  Client(const QString& url, json body) {
    thread = std::thread([this, endpoint = RemoteEndpoint{url.toStdString(), "", ""}, body] {
      RemoteStreamCallbacks cb;
      cb.on_content = [this](std::string_view, double) { started = true; };
      reply = stream_completion(endpoint, "/v1/chat/completions", body, cb);
      done = true;
    });
  }
  ~Client() { thread.join(); }
};

// A window on the demo model, serving on a free loopback port.
std::unique_ptr<MainWindow> serving_window(const QString& sessions) {
  QSettings().setValue("serve/port", 0);
  auto w = open_window(sessions, QString::fromStdString(inferscope::test::demo_model_path()));
  if (!wait_for_engine(*w)) return nullptr;
  w->serve_action()->trigger();
  if (!wait_for([&] { return !w->bridge().serving_url().isEmpty(); })) return nullptr;
  return w;
}

TEST(ServeWorkbench, AClientsRequestsRunBesideTheChatAndShowInTheViews) {
  QTemporaryDir sessions;
  const auto w = serving_window(sessions.path());
  ASSERT_NE(w, nullptr);
  const QString url = w->bridge().serving_url();
  EXPECT_TRUE(w->serve_action()->isChecked());
  EXPECT_TRUE(w->status_text().contains("serving " + url + "/v1 (0 running, 0 served)")) << w->status_text().toStdString();

  // A client streams while the chat answers a turn.
  Client client(url, story(200));
  ASSERT_TRUE(wait_for([&] { return client.started.load(); }));
  ASSERT_TRUE(chat_turn(*w, "Name three colours."));
  const std::string label = user_agent() + " at 127.0.0.1";
  // The block view names the client's sequence while it runs; the status bar counts it.
  ASSERT_TRUE(wait_for([&] {
    const QListWidget* list = w->block_table()->findChild<QListWidget*>();
    for (int i = 0; i < list->count(); ++i)
      if (list->item(i)->text().startsWith(QString::fromStdString(label))) return true;
    return false;
  }, 10000)) << "no sequence labelled " << label;
  EXPECT_TRUE(wait_for([&] { return w->status_text().contains("(1 running, 1 served)"); }, 5000)) << w->status_text().toStdString();
  ASSERT_TRUE(wait_for([&] { return client.done.load(); }, 120000));
  EXPECT_EQ(client.reply.outcome, RemoteOutcome::Finished) << client.reply.error;
  EXPECT_EQ(client.reply.finish_reason, "length");

  // The chat has its own reply only; the timeline has both, the client's labelled.
  const ChatSession& session = w->chat()->session(w->chat()->current_index());
  ASSERT_EQ(session.messages.size(), 2u);
  EXPECT_FALSE(session.messages[1].content.empty());
  EXPECT_EQ(session.messages[1].content.find(client.reply.text), std::string::npos);
  ASSERT_TRUE(wait_for([&] { return w->dashboard()->timeline()->lanes().size() == 2; }, 5000));
  int labelled = 0;
  for (const RequestLane& lane : w->dashboard()->timeline()->lanes()) labelled += lane.client == label;
  EXPECT_EQ(labelled, 1);
  EXPECT_TRUE(wait_for([&] { return w->status_text().contains("(0 running, 1 served)"); }, 5000)) << w->status_text().toStdString();

  // Off: no longer listening, and the status bar says nothing of a server.
  w->serve_action()->trigger();
  EXPECT_FALSE(w->bridge().serving());
  EXPECT_FALSE(w->status_text().contains("serving"));
  Client late(url, story(4));
  ASSERT_TRUE(wait_for([&] { return late.done.load(); }, 10000));
  EXPECT_EQ(late.reply.outcome, RemoteOutcome::Failed) << "nothing listens at " << url.toStdString();
}

TEST(ServeWorkbench, AConfigChangeActsOnAClientsRequestAsOnTheChats) {
  QTemporaryDir sessions;
  const auto w = serving_window(sessions.path());
  ASSERT_NE(w, nullptr);
  const QString url = w->bridge().serving_url();
  // The reply undisturbed, for reference.
  std::string reference;
  {
    Client alone(url, story(120));
    ASSERT_TRUE(wait_for([&] { return alone.done.load(); }, 120000));
    reference = alone.reply.text;
  }
  ASSERT_FALSE(reference.empty());

  // A new KV budget builds a new cache: the client's running request is preempted and recomputed on
  // it, as a chat reply is, and its reply is the same.
  QSignalSpy results(&w->bridge(), &EngineBridge::config_result);
  {
    Client client(url, story(120));
    ASSERT_TRUE(wait_for([&] { return client.started.load(); }));
    EngineConfig config = w->bridge().config();
    config.kv.budget_bytes = size_t{96} << 20;
    w->bridge().set_config(config);
    ASSERT_TRUE(wait_for([&] { return client.done.load(); }, 120000));
    EXPECT_EQ(client.reply.text, reference);
  }
  ASSERT_TRUE(wait_for([&] { return results.count() >= 1; }));
  const QString note = results.at(0).at(1).toString();
  EXPECT_TRUE(note.contains("1 running requests preempted")) << note.toStdString();

  // A new thread count waits until the client's request has ended, then a new engine serves at the same URL.
  {
    Client client(url, story(60));
    ASSERT_TRUE(wait_for([&] { return client.started.load(); }));
    EngineConfig config = w->bridge().config();
    config.threads = 1;
    w->bridge().set_config(config);
    ASSERT_TRUE(wait_for([&] { return results.count() >= 2; }));
    EXPECT_TRUE(results.at(1).at(1).toString().contains("once the running requests finish")) << results.at(1).at(1).toString().toStdString();
    ASSERT_TRUE(wait_for([&] { return client.done.load(); }, 120000));
    EXPECT_EQ(client.reply.finish_reason, "length") << "it ran to its end on the old engine";
  }
  ASSERT_TRUE(wait_for([&] {
    for (const QList<QVariant>& r : results)
      if (r.at(1).toString().startsWith("new engine with") && r.at(1).toString().contains("threads 1")) return true;
    return false;
  })) << "no new engine: " << [&] {
    std::string all;
    for (const QList<QVariant>& r : results) all += r.at(1).toString().toStdString() + " | ";
    return all;
  }();
  ASSERT_TRUE(wait_for([&] { return w->bridge().serving_url() == url; }));
  Client after(url, story(4));
  ASSERT_TRUE(wait_for([&] { return after.done.load(); }, 30000));
  EXPECT_EQ(after.reply.outcome, RemoteOutcome::Finished) << after.reply.error;
  EXPECT_TRUE(w->status_text().contains("served)")) << w->status_text().toStdString();
}

TEST(ServeDialogTest, RefusesAnOpenAddressWithoutAKey) {
  test_app();
  ServeOptions options;
  ServeDialog dialog(options);
  QPushButton* ok = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
  EXPECT_TRUE(ok->isEnabled());
  EXPECT_TRUE(dialog.verdict().contains("http://127.0.0.1:8080/v1")) << dialog.verdict().toStdString();
  auto* host = dialog.findChild<QLineEdit*>("serve_host");
  auto* key = dialog.findChild<QLineEdit*>("serve_key");
  ASSERT_TRUE(host && key);
  host->setText("0.0.0.0");
  EXPECT_FALSE(ok->isEnabled());
  EXPECT_TRUE(dialog.verdict().contains("set an API key")) << dialog.verdict().toStdString();
  key->setText("s3cret");
  EXPECT_TRUE(ok->isEnabled());
  EXPECT_EQ(dialog.options().host, "0.0.0.0");
  EXPECT_EQ(dialog.options().api_key, "s3cret");
  // The key is this run's only: saved settings never hold it.
  save_serve_settings(dialog.options());
  EXPECT_FALSE(QSettings().allKeys().join(' ').contains("key"));
  EXPECT_EQ(serve_settings().api_key, "s3cret");
}

}  // namespace
}  // namespace inferscope::gui::test
