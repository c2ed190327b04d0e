// The Compare A/B tab with a server side, against a scripted llama-server on 127.0.0.1 (one
// connection at a time, so the workloads are small and sent one by one): the local engine against
// the server fills both sides' rows, marks what the server does not report and pairs the texts; the
// API key reaches the server but never the export; a side must be checked first; a dead port or an
// HTTP error shows clearly; a server gone mid-comparison fails with its error; two servers need no
// model; cancel ends a run. Set COMPARE_REMOTE_SCREENSHOT to a PNG path to keep a picture of the tab.
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <atomic>

#include <nlohmann/json.hpp>

#include "gui/compare/compare_view.h"
#include "gui/compare/server_side_editor.h"
#include "tests/gui/compare_fixture.h"
#include "tests/support/canned_http_server.h"

namespace inferscope::gui::test {
namespace {

using ::inferscope::test::canned;
using ::inferscope::test::CannedHttpServer;
using ::inferscope::test::CannedRequest;
using ::inferscope::test::CannedResponse;

// A llama-server serving "stories260K": its models, props and counters, and completions streamed as
// three text chunks, a usage chunk with max_tokens generated, and [DONE]; `chunk_delay_ms` between chunks.
CannedHttpServer::Handler llama_server(std::atomic<int>& scrapes, int chunk_delay_ms = 0) {
  return [&scrapes, chunk_delay_ms](const CannedRequest& r) {
    if (r.path == "/v1/models") return canned(R"({"object":"list","data":[{"id":"stories260K","owned_by":"llamacpp"}]})");
    if (r.path == "/props") return canned(R"({"total_slots":1,"default_generation_settings":{"n_ctx":512}})");
    if (r.path == "/metrics") {
      const std::string n = std::to_string(++scrapes);
      return canned("# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total " + n + "2\n"
                    "# TYPE llamacpp:tokens_predicted_total counter\nllamacpp:tokens_predicted_total " + n + "8\n"
                    "# TYPE llamacpp:n_decode_total counter\nllamacpp:n_decode_total " + n + "0\n"
                    "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\n",
                    200, "text/plain");
    }
    const nlohmann::json body = nlohmann::json::parse(r.body);
    CannedResponse stream;
    stream.content_type = "text/event-stream";
    stream.chunk_delay_ms = chunk_delay_ms;
    for (const char* piece : {"Once", " upon", " a time"}) {
      stream.chunks.push_back("data: " + nlohmann::json{{"choices", {{{"index", 0}, {"text", piece}, {"finish_reason", nullptr}}}}}.dump() + "\n\n");
    }
    stream.chunks.push_back("data: " + nlohmann::json{{"choices", {{{"index", 0}, {"text", ""}, {"finish_reason", "length"}}}}}.dump() + "\n\n");
    stream.chunks.push_back(R"(data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":)" + body["max_tokens"].dump() + "}}\n\n");
    stream.chunks.push_back("data: [DONE]\n\n");
    return stream;
  };
}

// Side `side` of `view` on the server at `url`, checked; true when the check succeeded.
bool use_server(CompareView& view, int side, const std::string& url, const QString& api_key = {}) {
  view.set_on_server(side, true);
  ServerSideEditor& editor = *view.server_editor(side);
  editor.set_fields(QString::fromStdString(url), api_key, {}, 1);
  QSignalSpy checked(&editor, &ServerSideEditor::checked);
  editor.check();
  wait_for([&] { return checked.count() > 0; }, 10000);
  QString error;
  return editor.side(&error).has_value();
}

using CompareRemote = CompareWindow;

TEST_F(CompareRemote, LocalEngineAgainstAServerFillsBothSides) {
  std::atomic<int> scrapes{0};
  CannedHttpServer server(llama_server(scrapes));
  view->use_workload_file(write_workload(dir, 2, 6, 0.05));
  view->set_on_server(1, true);
  EXPECT_FALSE(view->start()) << "an unchecked server side is refused";
  EXPECT_TRUE(view->status_text().contains("Server B: press Check first")) << view->status_text().toStdString();

  ASSERT_TRUE(use_server(*view, 1, server.url(), "sk-secret-123")) << view->server_editor(1)->result_text().toStdString();
  EXPECT_TRUE(view->server_editor(1)->result_text().contains("llama.cpp")) << view->server_editor(1)->result_text().toStdString();
  EXPECT_TRUE(view->server_editor(1)->result_text().contains("stories260K"));
  ASSERT_TRUE(run_comparison(*view)) << view->status_text().toStdString();
  const Comparison* c = view->result();
  ASSERT_NE(c, nullptr) << view->status_text().toStdString();

  // A ran locally, B on the server: both served both requests.
  EXPECT_TRUE(c->a.metrics.source.empty());
  EXPECT_EQ(c->b.metrics.source, "llama.cpp at " + server.url() + " (stories260K)");
  EXPECT_EQ(c->a.summary.requests_finished, 2);
  EXPECT_EQ(c->b.summary.requests_finished, 2);
  EXPECT_EQ(c->b.summary.output_tokens, 12) << "from usage";
  ASSERT_EQ(c->b.outputs.size(), 2u);
  EXPECT_EQ(c->b.outputs[0].text, "Once upon a time");
  // Each request went out with its 12 prompt ids, max_tokens its output length and the key.
  int completions = 0;
  for (const CannedRequest& r : server.requests()) {
    if (r.path != "/v1/completions") continue;
    ++completions;
    const nlohmann::json body = nlohmann::json::parse(r.body);
    EXPECT_EQ(body["prompt"].size(), 12u);
    EXPECT_EQ(body["max_tokens"], 6);
    EXPECT_NE(r.headers.find("Bearer sk-secret-123"), std::string::npos);
  }
  EXPECT_EQ(completions, 2);

  // The table: the client's figures on both sides, what llama-server does not report said so.
  QTableWidget& table = *view->delta_table();
  ASSERT_EQ(table.rowCount(), 12);
  EXPECT_EQ(table.item(0, 0)->text(), "throughput");
  EXPECT_TRUE(table.item(0, 2)->text().endsWith("tok/s"));
  for (int row : {4, 5, 6, 7, 8, 9, 10, 11}) {
    EXPECT_EQ(table.item(row, 2)->text(), "not reported by llama.cpp") << table.item(row, 0)->text().toStdString();
  }
  // Texts paired by character; the headline names both sides.
  ASSERT_EQ(c->outputs.size(), 2u);
  EXPECT_TRUE(c->outputs[0].by_characters);
  // Its prompts are pseudo-random ids: the server's continuation is no answer, so its text is not shown.
  EXPECT_TRUE(view->outputs_text().contains("synthetic prompt")) << view->outputs_text().toStdString();
  EXPECT_FALSE(view->outputs_text().contains("Once upon a time"));
  EXPECT_TRUE(view->outputs_text().contains(c->outputs[0].divergence < 0 ? "identical" : "diverges at character"));
  const QLabel* headline = view->findChild<QLabel*>("compare_headline");
  EXPECT_TRUE(headline->text().contains(QString::fromStdString(c->b.metrics.source))) << headline->text().toStdString();

  // The export names the server and holds no key.
  const QString exported = dir.filePath("cmp.json");
  QString error;
  ASSERT_TRUE(view->export_to(exported, &error)) << error.toStdString();
  QFile file(exported);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QByteArray json = file.readAll();
  EXPECT_FALSE(json.contains("sk-secret-123"));
  EXPECT_EQ(nlohmann::json::parse(json.toStdString())["b"]["source"], c->b.metrics.source);

  if (const QByteArray shot = qgetenv("COMPARE_REMOTE_SCREENSHOT"); !shot.isEmpty()) {
    w->resize(1600, 1000);
    w->tabs()->setCurrentWidget(view);
    QApplication::processEvents();
    EXPECT_TRUE(w->grab().save(QString::fromLocal8Bit(shot)));
  }
}

TEST_F(CompareRemote, ADeadOrRefusingServerSaysWhy) {
  view->use_workload_file(write_workload(dir, 1, 4, 0.05));
  EXPECT_FALSE(use_server(*view, 1, "http://127.0.0.1:" + std::to_string(::inferscope::test::unused_port())));
  const QString dead = view->server_editor(1)->result_text();
  EXPECT_TRUE(dead.startsWith("✗")) << dead.toStdString();
  EXPECT_TRUE(dead.contains("127.0.0.1")) << dead.toStdString();
  EXPECT_FALSE(view->start());
  EXPECT_TRUE(view->status_text().contains("Server B: the check failed")) << view->status_text().toStdString();

  CannedHttpServer refusing([](const CannedRequest&) { return canned(R"({"error":{"message":"Invalid API Key"}})", 401); });
  EXPECT_FALSE(use_server(*view, 1, refusing.url()));
  EXPECT_TRUE(view->server_editor(1)->result_text().contains("401")) << view->server_editor(1)->result_text().toStdString();

  EXPECT_FALSE(use_server(*view, 1, "ftp://nowhere"));
  EXPECT_TRUE(view->server_editor(1)->result_text().contains("ftp://nowhere")) << view->server_editor(1)->result_text().toStdString();

  // Checked, then gone before the run: the comparison fails with the server's error, and nothing crashes.
  {
    std::atomic<int> scrapes{0};
    CannedHttpServer server(llama_server(scrapes));
    ASSERT_TRUE(use_server(*view, 1, server.url()));
  }
  ASSERT_TRUE(run_comparison(*view)) << view->status_text().toStdString();
  EXPECT_EQ(view->result(), nullptr);
  EXPECT_TRUE(view->status_text().startsWith("server B: every request failed")) << view->status_text().toStdString();
}

TEST_F(CompareRemote, TwoServersNeedNoModelAndCancelEndsTheRun) {
  std::atomic<int> scrapes{0};
  CannedHttpServer slow(llama_server(scrapes, 300));
  QTemporaryDir empty;
  auto bare = open_window(empty.path());
  CompareView& v = *bare->compare();
  v.use_workload_file(write_workload(dir, 3, 4, 0.05));
  ASSERT_TRUE(use_server(v, 0, slow.url()));
  ASSERT_TRUE(use_server(v, 1, slow.url()));
  QSignalSpy ended(&v, &CompareView::run_ended);
  ASSERT_TRUE(v.start()) << v.status_text().toStdString();
  EXPECT_TRUE(v.status_text().contains("llama.cpp at")) << v.status_text().toStdString();
  QTest::qWait(400);
  v.cancel();
  ASSERT_TRUE(wait_for([&] { return ended.count() > 0; }, 10000));
  EXPECT_TRUE(v.status_text().startsWith("Cancelled")) << v.status_text().toStdString();
  EXPECT_FALSE(v.running());
}

}  // namespace
}  // namespace inferscope::gui::test
