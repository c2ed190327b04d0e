// The workbench driven as a user would, offscreen, through the real engine thread on stories260K:
// the machine's roofs are measured once per process before the first model loads; a chat streams
// into the view, the dashboard (the roofline with the measured roofs) and the block-table view; the
// KV toggle changes the view and is marked on the dashboard's time charts; the fusion toggle rebuilds
// the engine with the same reply; sessions reload identically; a malformed model shows an error
// dialog; an exported session imports as a new one; a full context follows its policy (stop gives the text back, drop-middle says what it
// left out); failed turns keep the user's text.
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTextBrowser>
#include <qcustomplot.h>

#include <nlohmann/json.hpp>

#include "gui/app/status_fields.h"
#include "gui/blocks/block_grid.h"
#include "gui/blocks/block_table_view.h"
#include "gui/config/config_panel.h"
#include "gui/dashboard/metrics_dashboard.h"
#include "gui/dashboard/roofline_view.h"
#include "gui/help/help_texts.h"
#include "tests/gui/workbench_fixture.h"

namespace inferscope::gui::test {
namespace {

QString stories_model() { return QString::fromStdString(::inferscope::test::shared_model_path("stories260K.gguf")); }

int plotted_points(const MetricsDashboard& dashboard) {
  int points = 0;
  for (QCustomPlot* plot : dashboard.plots()) {
    for (int i = 0; i < plot->plottableCount(); ++i) {
      if (QCPPlottableInterface1D* data = plot->plottable(i)->interface1D()) points += data->dataCount();
    }
  }
  return points;
}

// A window on stories260K (into `w`) with its engine up and long greedy replies in the current
// session, so a reply is still streaming when the views refresh.
void open_streaming_window(const QTemporaryDir& dir, std::unique_ptr<MainWindow>& w) {
  w = open_window(dir.path(), stories_model());
  ASSERT_TRUE(wait_for_engine(*w));
  w->chat()->set_sampling(SamplingParams{}, 400);
}

// A window on stories260K whose current session has had one short greedy turn (16 tokens of "The cat").
void open_window_after_a_short_turn(const QTemporaryDir& dir, std::unique_ptr<MainWindow>& w) {
  ASSERT_NO_FATAL_FAILURE(open_streaming_window(dir, w));
  w->chat()->set_sampling(SamplingParams{}, 16);
  ASSERT_TRUE(chat_turn(*w, "The cat"));
}

// The labels of the configuration marks on a dashboard plot.
QStringList config_mark_labels(QCustomPlot* plot) {
  QStringList labels;
  for (int i = 0; i < plot->itemCount(); ++i)
    if (plot->item(i)->objectName() == "event_mark_label") labels << qobject_cast<QCPItemText*>(plot->item(i))->text();
  return labels;
}

TEST(Workbench, TheMachineIsMeasuredOnceBeforeTheFirstModelLoads) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  test_app();
  EngineBridge bridge(default_engine_config());
  QStringList order;
  double peak = 0, bandwidth = 0;
  QObject::connect(&bridge, &EngineBridge::machine_measured, [&](double p, double b) {
    order << "measured";
    peak = p, bandwidth = b;
  });
  QObject::connect(&bridge, &EngineBridge::model_loaded, [&] { order << "loaded"; });
  bridge.load_model(stories_model());
  ASSERT_TRUE(wait_for([&] { return order.size() == 2; }, 60000)) << order.join(",").toStdString();
  EXPECT_EQ(order, QStringList({"measured", "loaded"}));
  EXPECT_GT(peak, 1e8) << "any CPU does more than 0.1 GFLOP/s";
  EXPECT_GT(bandwidth, 1e8) << "and reads more than 100 MB/s";
  // Another bridge of the process gets the same numbers: measured once (two runs never agree exactly).
  EngineBridge second(default_engine_config());
  double again = 0;
  QObject::connect(&second, &EngineBridge::machine_measured, [&](double p, double) { again = p; });
  ASSERT_TRUE(wait_for([&] { return again > 0; }));
  EXPECT_EQ(again, peak);
}

TEST(Workbench, ChatStreamsIntoTheViewTheDashboardAndTheBlockTable) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  std::unique_ptr<MainWindow> w;
  ASSERT_NO_FATAL_FAILURE(open_streaming_window(dir, w));
  ChatPanel& chat = *w->chat();

  // While the reply streams, the block table must select this session's sequence and list its blocks.
  size_t most_blocks = 0;
  int owner = -1;
  QObject::connect(&w->bridge(), &EngineBridge::kv_updated, w.get(), [&](const KvSnapshot& snapshot) {
    const int32_t seq = w->bridge().sequence_of_request(chat.current_request());
    for (const KvSnapshot::Sequence& s : snapshot.sequences) {
      if (s.id != seq || w->block_table()->selected_sequence() != seq) continue;
      most_blocks = std::max(most_blocks, w->block_table()->selected_table().size());
      owner = chat.session_of_request(chat.current_request());
    }
  });
  ASSERT_TRUE(chat_turn(*w, "Once upon a time"));

  const ChatSession& s = chat.session(chat.current_index());
  ASSERT_EQ(s.messages.size(), 2u);
  const SessionMessage& reply = s.messages[1];
  EXPECT_EQ(reply.role, "assistant");
  EXPECT_GT(reply.stats.tokens, 10);
  EXPECT_GT(reply.stats.tokens_per_second, 0);
  EXPECT_GE(reply.stats.ttft_s, 0);
  // The streamed text is what the chat view shows, with the reply's measurements under it.
  const QString shown = chat.transcript().simplified();
  EXPECT_TRUE(shown.contains(QString::fromStdString(reply.content).simplified().left(60))) << shown.toStdString();
  EXPECT_TRUE(shown.contains(QString("%1 tokens").arg(reply.stats.tokens))) << shown.toStdString();
  EXPECT_TRUE(chat.context_text().startsWith("context ")) << chat.context_text().toStdString();

  EXPECT_GT(most_blocks, 0u) << "the block table never showed the streaming session's blocks";
  EXPECT_EQ(owner, chat.current_index());
  EXPECT_TRUE(wait_for([&] { return plotted_points(*w->dashboard()) > 0; })) << "the dashboard has no points";
  // The reply has ended: the status bar is back at idle (no throughput, no cache held).
  EXPECT_TRUE(wait_for([&] { return w->status_text().startsWith("running 0 "); })) << w->status_text().toStdString();
  EXPECT_TRUE(w->status_text().contains(" · KV 0% · engine: idle · ")) << w->status_text().toStdString();
  EXPECT_EQ(w->status_fields()->field("status_engine_decode")->toolTip(), help_html(help_text("status_engine_decode")));
  // The roofline has the measured roofs and the reply's steps under them.
  const RooflineView& roofline = *w->dashboard()->roofline();
  EXPECT_TRUE(roofline.roofs().known());
  EXPECT_EQ(roofline.note(), "");
  EXPECT_GT(roofline.decode->dataCount(), 0);
}

// Stop and Regenerate disable themselves under the keyboard focus: the focus goes back to the
// message box, where the user types next, not along the tab chain to the sampling fields.
TEST(Workbench, StopAndRegenerateLeaveTheFocusInTheMessageBox) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  std::unique_ptr<MainWindow> w;
  ASSERT_NO_FATAL_FAILURE(open_streaming_window(dir, w));
  w->activateWindow();
  ASSERT_TRUE(QTest::qWaitForWindowActive(w.get()));
  auto* stop = w->chat()->findChild<QPushButton*>("chat_stop");
  QWidget* input = w->chat()->findChild<QWidget*>("chat_input");
  ASSERT_TRUE(stop != nullptr && input != nullptr);
  w->chat()->set_input_text("Once upon a time");
  w->chat()->send();
  ASSERT_TRUE(wait_for([&] { return stop->isEnabled(); }));
  QTest::mouseClick(stop, Qt::LeftButton);
  ASSERT_TRUE(wait_for([&] { return w->chat()->requests_in_flight() == 0; }));
  QApplication::processEvents();
  EXPECT_EQ(QApplication::focusWidget(), input)
      << "focus on " << (QApplication::focusWidget() ? QApplication::focusWidget()->metaObject()->className() : "nothing");
}

// The conversation shows its latest turn when it opens and when a message is sent; while a reply
// streams, a user who scrolled up to read stays where they are.
TEST(Workbench, TheChatShowsTheNewTurnButLeavesAReaderWhereTheyScrolled) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  std::unique_ptr<MainWindow> w;
  ASSERT_NO_FATAL_FAILURE(open_streaming_window(dir, w));
  w->resize(1280, 720);
  w->chat()->set_sampling(SamplingParams{}, 120);
  for (const char* text : {"Once upon a time", "The dog"}) ASSERT_TRUE(chat_turn(*w, text));
  auto* view = w->chat()->findChild<QTextBrowser*>("chat_view");
  ASSERT_NE(view, nullptr);
  QScrollBar* bar = view->verticalScrollBar();
  QApplication::processEvents();
  ASSERT_GT(bar->maximum(), 0) << "two turns overflow the view";
  // Another session and back: the conversation opens at its end.
  const int first = w->chat()->current_index();
  w->chat()->new_session();
  w->chat()->select_session(first);
  QApplication::processEvents();
  EXPECT_EQ(bar->value(), bar->maximum());
  // Scrolled to the top, then a message sent: the view goes to the new turn.
  bar->setValue(0);
  w->chat()->set_input_text("The bird");
  w->chat()->send();
  EXPECT_EQ(bar->value(), bar->maximum());
  // Scrolled up while it streams: the reply's growth does not pull the reader down.
  bar->setValue(0);
  ASSERT_TRUE(wait_for([&] { return w->chat()->requests_in_flight() == 0; }));
  QApplication::processEvents();
  EXPECT_EQ(bar->value(), 0);
}

TEST(Workbench, AGreedyRegenerateSaysWhyTheSameReplyComesBack) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  std::unique_ptr<MainWindow> w;
  ASSERT_NO_FATAL_FAILURE(open_window_after_a_short_turn(dir, w));
  ChatPanel& chat = *w->chat();
  const std::string first = chat.session(chat.current_index()).messages.back().content;
  chat.regenerate();
  ASSERT_TRUE(wait_for([&] { return chat.requests_in_flight() == 0; }));
  const SessionMessage& again = chat.session(chat.current_index()).messages.back();
  EXPECT_EQ(again.content, first) << "greedy";
  EXPECT_TRUE(again.note.starts_with("Temperature 0 is greedy")) << again.note;
  EXPECT_TRUE(chat.transcript().contains("Raise temp")) << "shown above the reply";
  // With a temperature there is nothing to explain.
  SamplingParams warm;
  warm.temperature = 0.8f;
  chat.set_sampling(warm, 16);
  chat.regenerate();
  ASSERT_TRUE(wait_for([&] { return chat.requests_in_flight() == 0; }));
  EXPECT_EQ(chat.session(chat.current_index()).messages.back().note, "");
}

TEST(Workbench, ClickingABlockSelectsItsSessionWhenNamesRepeat) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  std::unique_ptr<MainWindow> w;
  ASSERT_NO_FATAL_FAILURE(open_streaming_window(dir, w));
  ChatPanel& chat = *w->chat();

  // Two sessions share a name; the second streams while the first is shown.
  const int first = chat.new_session("Twin");
  const int second = chat.new_session("Twin");
  chat.set_input_text("Once upon a time");
  chat.send();
  const int32_t request = chat.current_request();
  chat.select_session(first);

  // Click one of the second session's blocks while its reply streams.
  bool clicked = false;
  int selected_after_click = -1;
  QObject::connect(&w->bridge(), &EngineBridge::kv_updated, w.get(), [&](const KvSnapshot&) {
    BlockGrid& grid = *w->block_table()->grid();
    const int32_t seq = w->bridge().sequence_of_request(request);
    if (clicked || seq < 0) return;
    for (size_t block = 0; block < grid.snapshot().blocks.size(); ++block) {
      const std::vector<SeqId>& owners = grid.snapshot().blocks[block].owners;
      if (owners.size() != 1 || owners[0] != seq) continue;
      QTest::mouseClick(&grid, Qt::LeftButton, {}, grid.block_rect(static_cast<int32_t>(block)).center());
      clicked = true;
      selected_after_click = chat.current_index();
      return;
    }
  });
  ASSERT_TRUE(wait_for([&] { return chat.requests_in_flight() == 0; }, 60000));
  ASSERT_TRUE(clicked) << "no block of the streaming session was shown";
  EXPECT_EQ(selected_after_click, second) << "the click selected the other session with the same name";
}

TEST(Workbench, SwitchingPagedToContiguousChangesTheBlockView) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  std::unique_ptr<MainWindow> w;
  ASSERT_NO_FATAL_FAILURE(open_streaming_window(dir, w));
  ChatPanel& chat = *w->chat();
  ASSERT_TRUE(chat_turn(*w, "The cat"));
  ASSERT_TRUE(wait_for([&] { return w->block_table()->grid()->snapshot().kind == "paged"; }));

  // Flip the toggle as a user would; the engine answers that it built a new cache.
  w->config_panel()->findChild<QComboBox*>("kv")->setCurrentText("contiguous");
  ASSERT_TRUE(wait_for([&] { return w->config_panel()->result_text().contains("KV contiguous"); }))
      << w->config_panel()->result_text().toStdString();
  EXPECT_EQ(w->bridge().config().kv.kind, KvKind::Contiguous);
  // Every time chart marks the change with the engine's first words about it.
  for (const char* name : {"kv_usage", "ttft", "request_timeline"})
    EXPECT_EQ(config_mark_labels(w->dashboard()->plot(name)), QStringList{"KV contiguous"}) << name;

  // A streaming reply now shows as a reserved region: a used part and a reserved-but-unused part.
  bool region_seen = false;
  QObject::connect(&w->bridge(), &EngineBridge::kv_updated, w.get(), [&](const KvSnapshot& snapshot) {
    const int32_t seq = w->bridge().sequence_of_request(chat.current_request());
    const BlockGrid& grid = *w->block_table()->grid();
    if (grid.snapshot().kind != "contiguous") return;
    for (const KvSnapshot::Sequence& s : snapshot.sequences) {
      if (s.id != seq || s.block_table.empty()) continue;
      const int32_t region = s.block_table[0];
      region_seen |= grid.region_used_rect(region).width() > 0 && grid.region_waste_rect(region).width() > 0;
    }
  });
  ASSERT_TRUE(chat_turn(*w, "The dog"));
  EXPECT_TRUE(wait_for([&] { return w->block_table()->grid()->snapshot().kind == "contiguous"; }));
  EXPECT_TRUE(region_seen) << "no contiguous region with used and unused parts was drawn";
}

TEST(Workbench, SwitchingTheKvManagerWhileIdleChangesTheBlockView) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  std::unique_ptr<MainWindow> w;
  ASSERT_NO_FATAL_FAILURE(open_window_after_a_short_turn(dir, w));
  BlockTableView& blocks = *w->block_table();
  ASSERT_TRUE(wait_for([&] { return blocks.summary_text().startsWith("paged"); })) << blocks.summary_text().toStdString();
  ASSERT_EQ(w->bridge().in_flight(), 0);

  // No request runs: no token arrives to trigger a snapshot, yet the header must name the new manager.
  auto* kv_kind = w->config_panel()->findChild<QComboBox*>("kv");
  kv_kind->setCurrentText("contiguous");
  ASSERT_TRUE(wait_for([&] { return w->config_panel()->result_text().contains("KV contiguous"); }))
      << w->config_panel()->result_text().toStdString();
  EXPECT_TRUE(wait_for([&] { return blocks.summary_text().startsWith("contiguous"); }, 5000))
      << blocks.summary_text().toStdString();
  EXPECT_EQ(blocks.grid()->snapshot().kind, "contiguous");

  kv_kind->setCurrentText("paged");
  EXPECT_TRUE(wait_for([&] { return blocks.summary_text().startsWith("paged"); }, 5000)) << blocks.summary_text().toStdString();
  EXPECT_EQ(w->bridge().in_flight(), 0);
}

// The fusion toggle builds a new engine (fusion is fixed when one is built) that gives the same reply.
TEST(Workbench, TurningOperatorFusionOffRebuildsTheEngineWithTheSameReply) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  std::unique_ptr<MainWindow> w;
  ASSERT_NO_FATAL_FAILURE(open_window_after_a_short_turn(dir, w));
  const std::string fused = w->chat()->session(w->chat()->current_index()).messages.back().content;
  ASSERT_FALSE(fused.empty());

  QSignalSpy replaced(&w->bridge(), &EngineBridge::engine_replaced);
  auto* fuse = w->config_panel()->findChild<QCheckBox*>("fuse");
  ASSERT_NE(fuse, nullptr);
  ASSERT_TRUE(fuse->isChecked());
  fuse->setChecked(false);
  ASSERT_TRUE(wait_for([&] { return w->config_panel()->result_text().contains("operator fusion off"); }))
      << w->config_panel()->result_text().toStdString();
  EXPECT_FALSE(w->bridge().config().forward.matmul.fuse);
  EXPECT_EQ(replaced.count(), 1);

  w->chat()->new_session();
  ASSERT_TRUE(chat_turn(*w, "The cat"));
  const ChatSession& unfused = w->chat()->session(w->chat()->current_index());
  EXPECT_EQ(unfused.messages.back().content, fused);
  EXPECT_NE(unfused.timeline.back().engine.find("unfused"), std::string::npos) << unfused.timeline.back().engine;
}

TEST(Workbench, SavedSessionsReloadIdentically) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  std::vector<nlohmann::json> saved;
  QString transcript;
  {
    auto w = open_window(dir.path(), stories_model());
    ASSERT_TRUE(wait_for_engine(*w));
    ChatPanel& chat = *w->chat();
    SamplingParams sampling;
    sampling.temperature = 0.8f;
    sampling.top_k = 40;
    sampling.top_p = 0.9f;
    sampling.repeat_penalty = 1.1f;
    sampling.seed = 1234;
    chat.set_sampling(sampling, 40);
    ASSERT_TRUE(chat_turn(*w, "Lily went to the park"));
    chat.new_session("Second");
    chat.set_system_prompt("You tell short stories.");
    ASSERT_TRUE(chat_turn(*w, "Tim had a red ball"));
    chat.set_input_text("an unsent draft");
    for (int i = 0; i < chat.session_count(); ++i) saved.push_back(session_to_json(chat.session(i)));
    transcript = chat.transcript();
  }
  auto w = open_window(dir.path());
  ChatPanel& chat = *w->chat();
  ASSERT_EQ(chat.session_count(), static_cast<int>(saved.size()));
  for (int i = 0; i < chat.session_count(); ++i) EXPECT_EQ(session_to_json(chat.session(i)), saved[static_cast<size_t>(i)]);
  EXPECT_EQ(chat.session(chat.current_index()).name, "Second");
  EXPECT_EQ(chat.transcript(), transcript);
  EXPECT_EQ(chat.session(0).sampling.seed, 1234u);
  EXPECT_EQ(chat.session(1).timeline.size(), 1u);
}

TEST(Workbench, AnExportedSessionImportsAsANewOne) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir, elsewhere;
  {
    std::unique_ptr<MainWindow> w;
    ASSERT_NO_FATAL_FAILURE(open_window_after_a_short_turn(dir, w));
    ChatPanel& chat = *w->chat();
    const QString exported = elsewhere.filePath("story.json");
    QString error;
    ASSERT_TRUE(chat.export_session(0, exported, &error)) << error.toStdString();
    // Imported beside the session it came from: the same turns under a new id, selected and saved.
    const int index = chat.import_session(exported, &error);
    ASSERT_EQ(index, 1) << error.toStdString();
    EXPECT_EQ(chat.current_index(), 1);
    EXPECT_NE(chat.session(1).id, chat.session(0).id);
    EXPECT_EQ(chat.session(1).name, chat.session(0).name);
    ASSERT_EQ(chat.session(1).messages.size(), chat.session(0).messages.size());
    EXPECT_EQ(chat.session(1).messages[1].content, chat.session(0).messages[1].content);
    EXPECT_EQ(chat.session(1).timeline.size(), chat.session(0).timeline.size());
    EXPECT_TRUE(chat.transcript().contains(QString::fromStdString(chat.session(0).messages[1].content)));

    // A malformed file is refused, naming the file and the field; nothing is added.
    const QString bad = elsewhere.filePath("bad.json");
    QFile file(bad);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write(R"({"format": "inferscope-session", "version": 1, "id": "x", "name": 7})");
    file.close();
    EXPECT_EQ(chat.import_session(bad, &error), -1);
    EXPECT_TRUE(error.startsWith("Cannot import the session: " + bad + ": ")) << error.toStdString();
    EXPECT_TRUE(error.contains("'name'")) << error.toStdString();
    EXPECT_EQ(chat.session_count(), 2);
  }
  // Both are there after a restart.
  auto w = open_window(dir.path());
  EXPECT_EQ(w->chat()->session_count(), 2);
}

TEST(Workbench, MalformedModelFileShowsAnErrorDialogAndTheEngineGoesOn) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  const QString bad = dir.filePath("broken.gguf");
  {
    QFile file(bad);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    static const char kBroken[] = "GGUF\x03\x00\x00\x00 this is not a model";  // version 3, then junk
    file.write(kBroken, sizeof kBroken - 1);
  }
  auto w = open_window(dir.filePath("sessions"), stories_model());
  ASSERT_TRUE(wait_for_engine(*w));
  QSignalSpy errors(w.get(), &MainWindow::error_shown);
  w->open_model(bad);
  ASSERT_TRUE(wait_for([&] { return errors.count() == 1; }));
  QMessageBox* box = w->findChild<QMessageBox*>();
  ASSERT_NE(box, nullptr);
  EXPECT_TRUE(box->isVisible());
  EXPECT_TRUE(box->text().contains("broken.gguf")) << box->text().toStdString();
  // In words first (its header promises more than the file holds), the loader's exact message after.
  EXPECT_TRUE(box->text().contains("The file ends before its contents do")) << box->text().toStdString();
  EXPECT_TRUE(box->text().contains("\n\nDetails: ")) << box->text().toStdString();
  box->accept();  // what a user's click on OK does

  // The model that was loaded keeps serving.
  EXPECT_EQ(w->bridge().model_path(), stories_model());
  w->chat()->set_sampling(SamplingParams{}, 16);
  ASSERT_TRUE(chat_turn(*w, "Once"));
  EXPECT_GT(w->chat()->session(0).messages.back().stats.tokens, 0);
}

TEST(Workbench, AFullContextFollowsItsPolicyAndSaysWhatItLeftOut) {
  INFERSCOPE_REQUIRE_FILE(model, ::inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir dir;
  std::unique_ptr<MainWindow> w;
  ASSERT_NO_FATAL_FAILURE(open_streaming_window(dir, w));
  ChatPanel& chat = *w->chat();
  // A 96-token context and 16-token replies: a few turns fill it.
  EngineConfig small = w->bridge().config();
  small.context_length = 96;
  w->bridge().set_config(small);
  ASSERT_TRUE(wait_for([&] { return w->bridge().config().context_length == 96; }));
  chat.set_sampling(SamplingParams{}, 16);
  chat.set_context_policy(ContextPolicy::Stop);
  EXPECT_EQ(QSettings().value("chat/context_policy").toString(), "stop");

  // Stop: the turn that would not fit is refused, its text given back, the conversation unchanged.
  const QString turn = "Once upon a time there was a little dog who";
  size_t before = 0;
  for (int i = 0; i < 8 && chat.error_text().isEmpty(); ++i) {
    before = chat.session(0).messages.size();
    ASSERT_TRUE(chat_turn(*w, turn));
  }
  EXPECT_TRUE(chat.error_text().startsWith("The conversation (")) << chat.error_text().toStdString();
  EXPECT_TRUE(chat.error_text().contains("leaves no room for a reply in the 96-token context"));
  EXPECT_TRUE(chat.error_text().contains("your message is back in the input box"));
  EXPECT_EQ(chat.input_text(), turn);
  EXPECT_EQ(chat.session(0).messages.size(), before);

  // Drop the middle: the same turn goes out without the turns after the first exchange, and says so.
  chat.set_context_policy(ContextPolicy::DropMiddle);
  chat.set_input_text({});
  ASSERT_TRUE(chat_turn(*w, turn));
  EXPECT_TRUE(chat.error_text().isEmpty()) << chat.error_text().toStdString();
  const SessionMessage& reply = chat.session(0).messages.back();
  EXPECT_EQ(reply.role, "assistant");
  EXPECT_GT(reply.stats.tokens, 0);
  EXPECT_TRUE(reply.note.starts_with("Left out ")) << reply.note;
  EXPECT_LE(reply.stats.prompt_tokens, 96 - 16) << "the prompt left the reply its room";
  EXPECT_TRUE(chat.transcript().contains(QString::fromStdString(reply.note)));
  // The note is part of the saved session.
  EXPECT_EQ(session_from_json(session_to_json(chat.session(0)), "s.json").messages.back().note, reply.note);
  EXPECT_EQ(QSettings().value("chat/context_policy").toString(), "drop-middle");
}

TEST(Workbench, AFailedTurnGivesTheTextBack) {
  QTemporaryDir dir;
  auto w = open_window(dir.path());  // no model: the request fails
  ChatPanel& chat = *w->chat();
  ASSERT_TRUE(chat_turn(*w, "hello there"));
  EXPECT_EQ(chat.input_text(), "hello there");
  EXPECT_TRUE(chat.error_text().contains("no model is loaded")) << chat.error_text().toStdString();
  EXPECT_TRUE(chat.session(0).messages.empty());
  EXPECT_EQ(chat.session(0).timeline.size(), 1u);
  EXPECT_EQ(chat.session(0).timeline[0].finish_reason, "error");
}

}  // namespace
}  // namespace inferscope::gui::test
