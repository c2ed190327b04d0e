// The workbench's parts that need no model: session JSON (round trip, malformed files refused with
// the field named), the chat's Markdown-ish rendering and its reply line (this reply's own decode
// speed, with its help on hover), the status bar's figures with their help and its elided message, and demo-script checking.
#include <QDir>
#include <QLabel>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <nlohmann/json.hpp>

#include "gui/app/demo_script.h"
#include "gui/app/status_fields.h"
#include "gui/app/status_note.h"
#include "gui/help/help_texts.h"
#include "gui/chat/chat_render.h"
#include "gui/chat/chat_session.h"
#include "gui/chat/session_store.h"
#include "tests/gui/workbench_fixture.h"

namespace inferscope::gui::test {
namespace {

ChatSession sample_session() {
  ChatSession s;
  s.id = "a1b2";
  s.name = "Käse & <code>";
  s.created_unix_ms = 1700000000000;
  s.system_prompt = "Be brief.";
  s.sampling.temperature = 0.7f;
  s.sampling.seed = 99;
  s.max_tokens = 64;
  ReplyStats stats;
  stats.tokens = 12;
  stats.ttft_s = 0.25;
  stats.tokens_per_second = 40.5;
  stats.finish_reason = "stop";
  stats.engine = "paged 16";
  s.messages = {{"user", "hi\n```\nx < 1\n```", {}, {}, {}, {}}, {"assistant", "hello", stats, {}, {}, {}}};
  s.timeline = {stats};
  return s;
}

TEST(WorkbenchSession, JsonRoundTripsThroughTheStore) {
  QTemporaryDir dir;
  const SessionStore store(dir.path());
  const ChatSession s = sample_session();
  QString error;
  ASSERT_TRUE(store.save(s, &error)) << error.toStdString();
  QStringList errors;
  const std::vector<ChatSession> loaded = store.load_all(&errors);
  EXPECT_TRUE(errors.isEmpty());
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(session_to_json(loaded[0]), session_to_json(s));
  EXPECT_EQ(loaded[0].messages[1].stats.tokens_per_second, 40.5);
}

TEST(WorkbenchSession, MalformedFilesAreRefusedByField) {
  nlohmann::json j = session_to_json(sample_session());
  j["messages"][1].erase("stats");
  EXPECT_THROW(
      {
        try {
          session_from_json(j, "s.json");
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "s.json: messages[1]: missing field 'stats'");
          throw;
        }
      },
      std::runtime_error);
  j = session_to_json(sample_session());
  j["id"] = "../escape";
  EXPECT_THROW(session_from_json(j, "s.json"), std::runtime_error);
  j = session_to_json(sample_session());
  j["sampling"]["top_k"] = "many";
  EXPECT_THROW(session_from_json(j, "s.json"), std::runtime_error);
  // Numbers the field's type cannot hold (fuzz_chat_session: tests/fuzz/regressions/fuzz_chat_session).
  j = session_to_json(sample_session());
  j["created_unix_ms"] = 1e300;
  j["sampling"]["top_p"] = 1e300;
  try {
    session_from_json(j, "s.json");
    ADD_FAILURE() << "1e300 was read as a time";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "s.json: field 'created_unix_ms' has the wrong type: 1e+300");
  }
  j["created_unix_ms"] = 0;
  try {
    session_from_json(j, "s.json");
    ADD_FAILURE() << "1e300 was read as a float";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "s.json: sampling: field 'top_p' has the wrong type: 1e+300");
  }
  EXPECT_THROW(session_from_text("{\"format\": ", "s.json"), std::runtime_error);

  // A broken file in the folder is reported and the others still load.
  QTemporaryDir dir;
  const SessionStore store(dir.path());
  QString error;
  ASSERT_TRUE(store.save(sample_session(), &error));
  ASSERT_TRUE(write_json_file(dir.filePath("zz.json"), nlohmann::json{{"format", "other"}}, &error));
  QStringList errors;
  EXPECT_EQ(store.load_all(&errors).size(), 1u);
  ASSERT_EQ(errors.size(), 1);
  EXPECT_TRUE(errors[0].contains("zz.json")) << errors[0].toStdString();
}

TEST(WorkbenchRender, CodeFencesBecomeEscapedBlocks) {
  const QString html = markdown_to_html("Use `x` **now**:\n```cpp\nif (a < b) return;\n```\ndone");
  EXPECT_TRUE(html.contains("<pre")) << html.toStdString();
  EXPECT_TRUE(html.contains("if (a &lt; b) return;")) << html.toStdString();
  EXPECT_TRUE(html.contains(">cpp<")) << html.toStdString();
  EXPECT_TRUE(html.contains("<b>now</b>"));
  EXPECT_TRUE(html.contains(">x</code>"));
  EXPECT_TRUE(html.endsWith("done"));
  // A fence still open (a reply mid-stream) runs to the end as code.
  const QString open = markdown_to_html("text\n```\nint a;");
  EXPECT_TRUE(open.contains("<pre")) << open.toStdString();
  EXPECT_TRUE(open.contains("int a;"));
  EXPECT_FALSE(markdown_to_html("<script>").contains("<script>"));
}

TEST(WorkbenchRender, ReplyStatsLine) {
  ReplyStats s;
  s.tokens = 42;
  s.tokens_per_second = 38.06;
  s.ttft_s = 0.123;
  s.finish_reason = "stop";
  EXPECT_EQ(reply_stats_line(s), "42 tokens · this reply: 38.1 tok/s decode · TTFT 0.12 s · ended by the model");
  // How a reply ended reads as words, never as the engine's bare reason codes.
  s.finish_reason = "length";
  EXPECT_TRUE(reply_stats_line(s).endsWith("cut off at the reply's token limit")) << reply_stats_line(s).toStdString();
  s.finish_reason = "abort";
  EXPECT_TRUE(reply_stats_line(s).endsWith("stopped by you")) << reply_stats_line(s).toStdString();
  s.finish_reason = "error";
  EXPECT_TRUE(reply_stats_line(s).endsWith("failed")) << reply_stats_line(s).toStdString();
}

TEST(WorkbenchRender, TheReplyLineExplainsItselfOnHover) {
  test_app();
  QTextBrowser view;
  view.setHtml(conversation_html(sample_session(), false, false));
  // The tooltip of the characters of the reply's line is its help.
  const int at = view.toPlainText().indexOf("this reply:");
  ASSERT_GE(at, 0) << view.toPlainText().toStdString();
  QTextCursor cursor(view.document());
  cursor.setPosition(at + 2);
  EXPECT_EQ(cursor.charFormat().toolTip(), help_html(help_text("reply_stats")));
  cursor.setPosition(view.toPlainText().indexOf("hello") + 1);
  EXPECT_TRUE(cursor.charFormat().toolTip().isEmpty()) << "the reply itself has none";
}

TEST(WorkbenchStatus, EveryFigureShowsItsHelpOnHover) {
  test_app();
  StatusFields status;
  EXPECT_EQ(status.text(), "no model");
  EngineMetricsSnapshot m;
  m.num_requests_running = 2;
  m.num_requests_waiting = 1;
  m.kv.budget_bytes = 1000;
  m.kv.used_bytes = 500;
  for (const auto& [time_s, decode_tokens] : {std::pair{1.0, 50}, std::pair{2.0, 57}}) {
    StepMetrics& step = m.steps.emplace_back();
    step.time_s = time_s;
    step.duration_s = 0.5;
    step.decode_tokens = decode_tokens;
  }
  m.weights_quant = "q8";
  m.weight_bytes = size_t{1} << 20;
  status.show_metrics(m);
  EXPECT_EQ(status.text(), "running 2 · waiting 1 · KV 50% · engine: 107.0 tok/s decode (all requests) · weights q8 (1.0 MiB)");
  for (const char* key : {"status_running", "status_waiting", "status_kv", "status_engine_decode", "status_weights"}) {
    QLabel* label = status.field(key);
    ASSERT_NE(label, nullptr) << key;
    EXPECT_FALSE(label->isHidden()) << key;
    EXPECT_EQ(label->toolTip(), help_html(help_text(key))) << key;
  }
  EXPECT_TRUE(status.field("status_conversion")->isHidden()) << "no conversion runs";
  m.converting_to = "q4";
  m.conversion_progress = 0.4;
  status.show_metrics(m);
  EXPECT_TRUE(status.text().endsWith(" · weights q8 (1.0 MiB) · converting to q4 40%")) << status.text().toStdString();
  EXPECT_EQ(status.field("status_conversion")->toolTip(), help_html(help_text("status_conversion")));
  // With no request running the engine is idle, whatever its last steps did.
  m.num_requests_running = 0;
  status.show_metrics(m);
  EXPECT_TRUE(status.text().contains(" · engine: idle · ")) << status.text().toStdString();
}

TEST(WorkbenchStatus, ALongMessageIsElidedWithItsWholeTextOnHover) {
  test_app();
  StatusNote note;
  note.resize(300, 20);
  note.show();
  const QString message = "Opened gemma-3-270m-q4_k_m.gguf keeping the engine settings in use: paged 16 · 64 MiB · "
                          "prefix cache · KV f16 · flash · weights q8 · continuous (the config panel changes them)";
  note.show_message(message, 50);
  EXPECT_EQ(note.message(), message);
  EXPECT_EQ(note.toolTip(), message);
  EXPECT_TRUE(note.text().endsWith(QChar(0x2026))) << note.text().toStdString();
  EXPECT_LE(note.fontMetrics().horizontalAdvance(note.text()), note.contentsRect().width());
  // Wider, more of it shows; then it goes after its timeout.
  const qsizetype shown_narrow = note.text().size();
  note.resize(600, 20);
  EXPECT_GT(note.text().size(), shown_narrow);
  EXPECT_TRUE(wait_for([&] { return note.message().isEmpty(); }));
  EXPECT_TRUE(note.text().isEmpty());
  EXPECT_TRUE(note.toolTip().isEmpty());
}

TEST(WorkbenchDemoScript, BadScriptsAreRefusedBeforeRunning) {
  QTemporaryDir dir;
  auto w = open_window(dir.path());
  auto refused = [&](const nlohmann::json& script) -> std::string {
    try {
      DemoScript demo(*w, script, "demo.json", dir.filePath("out.png"));
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(refused({{"steps", {{{"dance", 1}}}}}).rfind("demo.json: steps[0]: no known action", 0), 0u);
  EXPECT_EQ(refused({{"steps", {{{"wait", 1}}, {{"config", {{"kv", "ring"}}}}}}}),
            "demo.json: steps[1]: config: 'kv': \"ring\" is not one of paged, contiguous");
  EXPECT_EQ(refused({{"steps", {{{"config", {{"speed", 2}}}}}}}), "demo.json: steps[0]: config: unknown toggle 'speed'");
  EXPECT_EQ(refused({{"steps", {{{"send", 3}}}}}), "demo.json: steps[0]: field 'send' is missing or has the wrong type: 3");
  EXPECT_EQ(refused({{"no_steps", true}}), "demo.json: expected an object with a 'steps' array");
}

// Every script in resources/demo (the docs' screenshots are made by them) passes the checks.
TEST(WorkbenchDemoScript, ShippedDemosAreValid) {
  QTemporaryDir dir;
  auto w = open_window(dir.path());
  const QDir demos(QString(INFERSCOPE_SOURCE_DIR) + "/resources/demo");
  const QStringList files = demos.entryList({"*.json"}, QDir::Files, QDir::Name);
  ASSERT_GE(files.size(), 4) << demos.path().toStdString();
  for (const QString& name : files) {
    SCOPED_TRACE(name.toStdString());
    const nlohmann::json script = DemoScript::read_file(demos.filePath(name));
    EXPECT_NO_THROW(DemoScript(*w, script, name, dir.filePath("out.png")));
  }
}

}  // namespace
}  // namespace inferscope::gui::test
