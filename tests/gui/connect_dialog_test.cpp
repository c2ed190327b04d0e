// The "Connect to server" dialog against a scripted local server (never the real network): a
// llama-server-like answer lists its models, says what answered and enables Connect; a dead port, an
// HTTP 500 and a silent server each say what went wrong (the server's own message, the timeout) and
// keep Connect disabled; a bad URL is refused at once, naming it; editing the URL after a check asks
// for a new one; closing the dialog mid-check is safe and leaves no thread behind; recent servers are remembered (URL and model,
// never the API key) and one click checks one again.
#include <gtest/gtest.h>

#include <filesystem>
#include <iterator>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>

#include "gui/remote/connect_dialog.h"
#include "gui/remote/recent_endpoints.h"
#include "tests/gui/offscreen_app.h"
#include "tests/support/canned_http_server.h"

namespace inferscope::gui::test {
namespace {

using inferscope::test::CannedHttpServer;
using inferscope::test::CannedRequest;
using inferscope::test::CannedResponse;

// Threads of this process now (Linux: one entry per thread under /proc/self/task).
size_t thread_count() {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/task"), std::filesystem::directory_iterator{}));
}

// `body` with `status`, after `silence_ms` without a byte.
CannedResponse answer(std::string body, int status = 200, int silence_ms = 0) {
  CannedResponse r;
  r.status = status;
  r.chunks = {std::move(body)};
  r.silence_before_ms = silence_ms;
  return r;
}

// What llama-server answers: two models (as a router would list them), 4 slots of 512 tokens.
CannedResponse llama_server(const CannedRequest& r) {
  if (r.path == "/v1/models")
    return answer(R"({"object":"list","data":[{"id":"smollm2","owned_by":"llamacpp"},{"id":"qwen3","owned_by":"llamacpp"}]})");
  if (r.path == "/props") return answer(R"({"total_slots":4,"default_generation_settings":{"n_ctx":512},"build_info":"b6000"})");
  return answer(R"({"error":{"message":"not found"}})", 404);
}

struct ConnectDialogTest : ::testing::Test {
  ConnectDialogTest() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings under ~/.qttest, not the user's own
    QApplication::setOrganizationName(QStringLiteral("InferscopeTest"));
    QApplication::setApplicationName(QStringLiteral("connect_dialog_test"));
    QSettings().clear();
    QSettings().sync();
  }
  ~ConnectDialogTest() override {
    QSettings().clear();
    QSettings().sync();
  }
  static QString status(ConnectDialog& d) { return d.findChild<QLabel*>(QStringLiteral("status"))->text(); }
  static bool connect_enabled(ConnectDialog& d) {
    return d.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->isEnabled();
  }
  static QComboBox* models(ConnectDialog& d) { return d.findChild<QComboBox*>(QStringLiteral("model")); }
  // Types `url` (and `key`), presses Check and waits for the outcome; returns whether it succeeded.
  static bool check(ConnectDialog& d, const QString& url, const QString& key = {}) {
    d.findChild<QLineEdit*>(QStringLiteral("url"))->setText(url);
    d.findChild<QLineEdit*>(QStringLiteral("api_key"))->setText(key);
    QSignalSpy done(&d, &ConnectDialog::check_finished);
    QTest::mouseClick(d.findChild<QPushButton*>(QStringLiteral("check")), Qt::LeftButton);
    if (done.isEmpty() && !done.wait(10000)) ADD_FAILURE() << "no outcome for " << url.toStdString();
    return !done.isEmpty() && done.front().front().toBool();
  }
  QApplication& app = offscreen_app();
};

TEST_F(ConnectDialogTest, ALlamaServerListsItsModelsAndEnablesConnect) {
  CannedHttpServer server(llama_server);
  ConnectDialog d;
  d.show();
  EXPECT_FALSE(connect_enabled(d));
  EXPECT_EQ(d.findChild<QLineEdit*>(QStringLiteral("url"))->placeholderText(), "http://127.0.0.1:8080");
  EXPECT_EQ(d.findChild<QLineEdit*>(QStringLiteral("api_key"))->echoMode(), QLineEdit::Password);

  ASSERT_TRUE(check(d, QString::fromStdString(server.url()) + "/v1/", "sk-test"));
  EXPECT_TRUE(connect_enabled(d));
  EXPECT_EQ(models(d)->count(), 2);
  EXPECT_EQ(models(d)->itemText(0), "smollm2");
  EXPECT_EQ(status(d), "llama.cpp · 4 slots · context 512 · 2 models · build b6000");
  models(d)->setCurrentIndex(1);
  const RemoteEndpoint e = d.endpoint();
  EXPECT_EQ(e.base_url, server.url());  // the trailing /v1/ dropped
  EXPECT_EQ(e.model, "qwen3");
  EXPECT_EQ(e.api_key, "sk-test");
  EXPECT_EQ(d.server_info().kind, ServerKind::LlamaCpp);
  EXPECT_EQ(d.server_info().slot_count, 4);
  // The key went to the server as a Bearer token.
  EXPECT_NE(server.requests().front().headers.find("Authorization: Bearer sk-test"), std::string::npos);

  // An edited URL is not the one checked: Connect waits for a new check.
  QTest::keyClick(d.findChild<QLineEdit*>(QStringLiteral("url")), Qt::Key_Backspace);
  EXPECT_FALSE(connect_enabled(d));
  EXPECT_EQ(models(d)->count(), 0);
}

// The check reads /metrics too: the releases whose names it fits, and what the dashboard will lack.
TEST_F(ConnectDialogTest, TheCheckSaysWhichReleasesTheServersMetricsFit) {
  QFile scrape(QStringLiteral(INFERSCOPE_SOURCE_DIR "/tests/fixtures/metrics/releases/llama-server-0.3.36-single/scrape2.txt"));
  ASSERT_TRUE(scrape.open(QIODevice::ReadOnly));
  const std::string metrics = scrape.readAll().toStdString();
  CannedHttpServer server([&](const CannedRequest& r) { return r.path == "/metrics" ? answer(metrics) : llama_server(r); });
  ConnectDialog d;
  d.show();
  ASSERT_TRUE(check(d, QString::fromStdString(server.url())));
  EXPECT_EQ(status(d),
            "llama.cpp · 4 slots · context 512 · 2 models · build b6000\n"
            "Its /metrics names fit llama.cpp (llama-cpp-python 0.3.36). Not published: KV cache usage, preemptions, "
            "prefix cache hit rate, acceptance by draft position, time to first token, inter-token latency, end-to-end "
            "latency, queue time.");
  render(d, "connect_dialog_metrics");
}

TEST_F(ConnectDialogTest, ADeadPortSaysNothingIsListening) {
  ConnectDialog d;
  EXPECT_FALSE(check(d, QStringLiteral("http://127.0.0.1:%1").arg(inferscope::test::unused_port())));
  EXPECT_TRUE(status(d).startsWith("Cannot connect: nothing is listening there")) << status(d).toStdString();
  EXPECT_FALSE(connect_enabled(d));
  EXPECT_EQ(models(d)->count(), 0);
}

TEST_F(ConnectDialogTest, AnHttpErrorShowsTheServersMessage) {
  CannedHttpServer server([](const CannedRequest&) { return answer(R"({"error":{"message":"model is still loading"}})", 500); });
  ConnectDialog d;
  EXPECT_FALSE(check(d, QString::fromStdString(server.url())));
  EXPECT_TRUE(status(d).startsWith("The server answered with an error (HTTP 500).")) << status(d).toStdString();
  EXPECT_TRUE(status(d).contains("model is still loading")) << status(d).toStdString();
  EXPECT_FALSE(connect_enabled(d));
  d.show();
  render(d, "connect_dialog_http_error");
}

TEST_F(ConnectDialogTest, ARefusedKeySaysToCheckIt) {
  CannedHttpServer server([](const CannedRequest&) { return answer(R"({"error":{"message":"Invalid API Key"}})", 401); });
  ConnectDialog d;
  EXPECT_FALSE(check(d, QString::fromStdString(server.url()), "wrong"));
  EXPECT_TRUE(status(d).contains("check the API key")) << status(d).toStdString();
  EXPECT_TRUE(status(d).contains("Invalid API Key")) << status(d).toStdString();
}

TEST_F(ConnectDialogTest, ASilentServerTimesOut) {
  CannedHttpServer server([](const CannedRequest&) { return answer("{}", 200, 1500); });
  ConnectDialog d;
  d.set_probe_timeout(0.3);
  EXPECT_THROW(d.set_probe_timeout(0), std::invalid_argument);
  EXPECT_FALSE(check(d, QString::fromStdString(server.url())));
  EXPECT_TRUE(status(d).startsWith("The server did not answer within 0.3 s.")) << status(d).toStdString();
  EXPECT_FALSE(connect_enabled(d));
  d.show();
  render(d, "connect_dialog_timeout");
}

TEST_F(ConnectDialogTest, NotAModelsListSaysSo) {
  CannedHttpServer server([](const CannedRequest&) { return answer("<html>hello</html>"); });
  ConnectDialog d;
  EXPECT_FALSE(check(d, QString::fromStdString(server.url())));
  EXPECT_TRUE(status(d).startsWith("This is not an OpenAI-compatible server.")) << status(d).toStdString();
}

TEST_F(ConnectDialogTest, AnUnknownServerKindIsStillUsable) {
  CannedHttpServer server([](const CannedRequest& r) {
    return r.path == "/v1/models" ? answer(R"({"data":[{"id":"m","owned_by":"someone"}]})") : answer("{}", 404);
  });
  ConnectDialog d;
  EXPECT_TRUE(check(d, QString::fromStdString(server.url())));
  EXPECT_EQ(status(d), "OpenAI-compatible server of unknown kind · model m");
  EXPECT_EQ(d.server_info().kind, ServerKind::Unknown);
  EXPECT_TRUE(connect_enabled(d));
}

TEST_F(ConnectDialogTest, ABadUrlIsRefusedAtOnceNamingIt) {
  ConnectDialog d;
  EXPECT_FALSE(check(d, QStringLiteral("ftp://example")));
  EXPECT_EQ(status(d), "server URL 'ftp://example': the scheme must be http or https, not ftp");
  EXPECT_FALSE(connect_enabled(d));
}

TEST_F(ConnectDialogTest, ClosingTheDialogMidCheckIsSafe) {
  CannedHttpServer server([](const CannedRequest&) { return answer(R"({"data":[{"id":"m","owned_by":"vllm"}]})", 200, 300); });
  const size_t threads_before = thread_count();
  {
    ConnectDialog d;
    d.findChild<QLineEdit*>(QStringLiteral("url"))->setText(QString::fromStdString(server.url()));
    d.check();
    EXPECT_EQ(thread_count(), threads_before + 1);
  }  // destroyed while its thread waits for the server: the probe is cancelled and its thread joined
  EXPECT_EQ(thread_count(), threads_before);  // none left running into the process's exit
  QTest::qWait(100);  // a report posted before the cancel went with the dialog: nothing is delivered
}

TEST_F(ConnectDialogTest, RemembersUrlAndModelButNeverTheKey) {
  CannedHttpServer server([](const CannedRequest& r) {
    if (r.path == "/v1/models") return answer(R"({"data":[{"id":"Qwen/Qwen3-8B","owned_by":"vllm","max_model_len":32768},{"id":"Qwen/Qwen3-0.6B"}]})");
    return answer("{}", 404);
  });
  {
    ConnectDialog d;
    ASSERT_TRUE(check(d, QString::fromStdString(server.url()), "sk-very-secret-key"));
    EXPECT_EQ(status(d), "vLLM · context 32768 · 2 models");
    models(d)->setCurrentIndex(1);
    d.accept();
  }
  ConnectDialog::remember_endpoint(make_endpoint("http://10.0.0.2:8000", "sk-other-secret", "meta-llama/Llama-3.1-8B-Instruct"));
  QSettings settings;
  settings.sync();
  const QList<RecentEndpoint> recent = recent_endpoints();
  ASSERT_EQ(recent.size(), 2);
  EXPECT_EQ(recent[0].url, "http://10.0.0.2:8000");
  EXPECT_EQ(recent[1].url, QString::fromStdString(server.url()));
  EXPECT_EQ(recent[1].model, "Qwen/Qwen3-0.6B");
  QFile file(settings.fileName());
  ASSERT_TRUE(file.open(QIODevice::ReadOnly)) << settings.fileName().toStdString();
  const QByteArray stored = file.readAll();
  EXPECT_TRUE(stored.contains("10.0.0.2")) << stored.toStdString();
  EXPECT_FALSE(stored.contains("secret")) << stored.toStdString();

  // Remembering again moves it first, once.
  ConnectDialog::remember_endpoint(make_endpoint(server.url(), "", "Qwen/Qwen3-0.6B"));
  ASSERT_EQ(recent_endpoints().size(), 2);
  EXPECT_EQ(recent_endpoints()[0].model, "Qwen/Qwen3-0.6B");

  // One click on a recent server checks it and selects its model.
  ConnectDialog d;
  d.show();
  auto* list = d.findChild<QListWidget*>(QStringLiteral("recent"));
  ASSERT_EQ(list->count(), 2);
  EXPECT_EQ(list->item(0)->text(), QString::fromStdString(server.url()) + " · Qwen/Qwen3-0.6B");
  QSignalSpy done(&d, &ConnectDialog::check_finished);
  QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(list->item(0)).center());
  ASSERT_TRUE(done.wait(10000));
  EXPECT_TRUE(done.front().front().toBool());
  EXPECT_EQ(d.endpoint().model, "Qwen/Qwen3-0.6B");
  EXPECT_TRUE(d.endpoint().api_key.empty());
  EXPECT_GT(distinct_colors(render(d, "connect_dialog")), 2);
}

TEST_F(ConnectDialogTest, KeepsAtMostEightRecentServers) {
  for (int i = 0; i < 10; ++i) ConnectDialog::remember_endpoint(make_endpoint("http://h" + std::to_string(i) + ":8000"));
  const QList<RecentEndpoint> recent = recent_endpoints();
  ASSERT_EQ(recent.size(), kMaxRecentEndpoints);
  EXPECT_EQ(recent.front().url, "http://h9:8000");
  EXPECT_EQ(recent.back().url, "http://h2:8000");
}

}  // namespace
}  // namespace inferscope::gui::test
