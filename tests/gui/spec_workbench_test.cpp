// Speculative decoding in the workbench, offscreen, through the real engine thread on stories260K
// (5 layers; the file is its own perfect draft): the config panel turns speculation on and the
// engine runs it (greedy replies unchanged, the acceptance panels fill), also between the steps of
// a streaming reply; the per-token view colours
// an early-exit reply's tokens by origin with refused drafts struck through and p(x)/q(x) on hover;
// bad drafts (too many early-exit layers, another vocabulary, k out of range, a self-quant level no
// smaller than the weights) each show a dialog while the engine keeps serving.
#include <QComboBox>
#include <QHelpEvent>
#include <QLineEdit>
#include <QMessageBox>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTextBlock>
#include <QTextBrowser>
#include <QToolTip>
#include <qcustomplot.h>

#include "gui/config/config_panel.h"
#include "gui/config/file_picker.h"
#include "gui/dashboard/metrics_dashboard.h"
#include "tests/gui/workbench_fixture.h"
#include "tests/support/synthetic_model.h"

namespace inferscope::gui::test {
namespace {

QString stories_model() { return QString::fromStdString(::inferscope::test::shared_model_path("stories260K.gguf")); }

QCPAbstractPlottable* series(QCustomPlot* plot, const QString& name) {
  for (int i = 0; i < plot->plottableCount(); ++i)
    if (plot->plottable(i)->name() == name) return plot->plottable(i);
  ADD_FAILURE() << "no series '" << name.toStdString() << "' in " << plot->objectName().toStdString();
  return nullptr;
}

struct SpecWorkbench : ::testing::Test {
  void SetUp() override {
    ASSERT_TRUE(::inferscope::test::model_file_exists(stories_model().toStdString()));
    w = open_window(dir.path(), stories_model());
    ASSERT_TRUE(wait_for_engine(*w));
    panel = w->config_panel();
    w->chat()->set_sampling(SamplingParams{}, 48);  // greedy
  }
  template <typename T>
  T* field(const char* name) {
    T* f = panel->findChild<T*>(name);
    EXPECT_NE(f, nullptr) << name;
    return f;
  }
  // Picks a speculation mode in the panel as a user would.
  void choose_mode(const char* mode) { field<QComboBox>("spec")->setCurrentText(mode); }
  // Types a value into a spin box and ends the edit.
  void edit_spin(const char* name, int value) {
    QSpinBox* box = field<QSpinBox>(name);
    box->setValue(value);
    emit box->editingFinished();
  }
  void pick_draft_file(const QString& path) {
    QLineEdit* edit = field<FilePicker>("draft_model")->edit();
    edit->setText(path);
    emit edit->editingFinished();
  }
  // Waits for the engine's answer naming `text`.
  bool answered(const QString& text) {
    return wait_for([&] { return panel->result_text().contains(text); });
  }
  // Waits for the next error dialog, checks it is up, and closes it as a click on OK does.
  QString next_dialog(QSignalSpy& errors) {
    if (!wait_for([&] { return errors.count() > 0; })) return "no dialog";
    const QString text = errors.takeFirst().at(0).toString();
    for (QMessageBox* box : w->findChildren<QMessageBox*>()) {
      if (box->text() != text) continue;
      EXPECT_TRUE(box->isVisible());
      box->accept();
      return text;
    }
    return "the dialog is not shown";
  }
  // The engine still serves: a greedy turn in a fresh session streams tokens.
  void expect_serving() {
    w->chat()->new_session();
    ASSERT_TRUE(chat_turn(*w, "Once"));
    const ChatSession& s = w->chat()->session(w->chat()->current_index());
    EXPECT_EQ(s.messages.back().role, "assistant");
    EXPECT_GT(s.messages.back().stats.tokens, 0);
  }

  QTemporaryDir dir;
  std::unique_ptr<MainWindow> w;
  ConfigPanel* panel = nullptr;
};

TEST_F(SpecWorkbench, TheConfigPanelTurnsSpeculationOnAndTheAcceptancePanelsFill) {
  ChatPanel& chat = *w->chat();
  ASSERT_TRUE(chat_turn(*w, "Once upon a time"));
  const std::string plain_reply = chat.session(chat.current_index()).messages.back().content;

  // Draft mode waits for its file instead of being refused.
  choose_mode("draft");
  EXPECT_TRUE(panel->result_text().contains("Choose the draft model file")) << panel->result_text().toStdString();
  EXPECT_EQ(w->bridge().config().spec.mode, SpecMode::None);
  edit_spin("spec_k", 4);  // a fixed k: every step drafts, whatever the drafts cost here
  pick_draft_file(stories_model());
  ASSERT_TRUE(answered("speculation draft, draft tokens 4, draft model ")) << panel->result_text().toStdString();
  EXPECT_EQ(w->bridge().config().spec.mode, SpecMode::Draft);
  EXPECT_EQ(w->bridge().config().spec.draft_model, stories_model().toStdString());

  // The same prompt again, now speculating: greedy output is the target's own.
  chat.new_session();
  ASSERT_TRUE(chat_turn(*w, "Once upon a time"));
  EXPECT_EQ(chat.session(chat.current_index()).messages.back().content, plain_reply);

  // The model drafts for itself, so every draft token is accepted.
  MetricsDashboard& dash = *w->dashboard();
  QCustomPlot* by_position = dash.plot("spec_decode");
  QCustomPlot* over_time = dash.plot("spec_acceptance");
  ASSERT_TRUE(by_position && over_time);
  ASSERT_TRUE(wait_for([&] { return series(by_position, "acceptance")->interface1D()->dataCount() == 4; }));
  EXPECT_DOUBLE_EQ(series(by_position, "acceptance")->interface1D()->dataMainValue(0), 1.0);
  QCPAbstractPlottable* per_step = series(over_time, "per step");
  ASSERT_GT(per_step->interface1D()->dataCount(), 0);
  for (int i = 0; i < per_step->interface1D()->dataCount(); ++i) EXPECT_DOUBLE_EQ(per_step->interface1D()->dataMainValue(i), 1.0);
  EXPECT_GT(series(over_time, "verify time")->interface1D()->dataCount(), 0);
  // Every decode step allowed the fixed k, drawn on an axis of its own.
  QCPAbstractPlottable* allowed = series(over_time, "draft k allowed");
  ASSERT_GT(allowed->interface1D()->dataCount(), 0);
  for (int i = 0; i < allowed->interface1D()->dataCount(); ++i) EXPECT_DOUBLE_EQ(allowed->interface1D()->dataMainValue(i), 4.0);
  EXPECT_TRUE(qobject_cast<QCPGraph*>(allowed)->valueAxis()->visible());
  auto* summary = qobject_cast<QCPTextElement*>(by_position->plotLayout()->element(1, 0));
  ASSERT_NE(summary, nullptr);
  // Every draft passed: close to 1 + k tokens per verify pass (drafts near the output limit are shorter).
  const QStringList words = summary->text().split(' ');
  ASSERT_GE(words.size(), 3);
  EXPECT_EQ(words[0] + " " + words[1], "mean length");
  EXPECT_GT(words[2].toDouble(), 4.0) << summary->text().toStdString();
  EXPECT_TRUE(summary->text().contains(" vs verify ")) << summary->text().toStdString();
  EXPECT_TRUE(w->status_text().startsWith("running ")) << w->status_text().toStdString();
}

TEST_F(SpecWorkbench, SpeculationSwitchesOnBetweenTheStepsOfAStreamingReply) {
  ChatPanel& chat = *w->chat();
  chat.set_sampling(SamplingParams{}, 300);
  ASSERT_TRUE(chat_turn(*w, "Lily and Ben"));
  const std::string plain_reply = chat.session(chat.current_index()).messages.back().content;

  // The same prompt; n-gram lookup is switched on while the reply streams.
  chat.new_session();
  chat.set_input_text("Lily and Ben");
  chat.send();
  // (on a loaded machine the GUI thread may first look after the whole reply: then it switches after)
  ASSERT_TRUE(wait_for([&] { return chat.streaming_tokens(chat.current_index()) >= 3 || chat.requests_in_flight() == 0; }));
  choose_mode("ngram");
  ASSERT_TRUE(answered("speculation ngram")) << panel->result_text().toStdString();
  ASSERT_TRUE(wait_for([&] { return chat.requests_in_flight() == 0; }, 60000));
  const SessionMessage& reply = chat.session(chat.current_index()).messages.back();
  EXPECT_EQ(reply.content, plain_reply) << "greedy output is the target's, before and after the switch";
  // Plain tokens first (whether the reply ends before the switch is a matter of timing on a model
  // this small; EngineCore's own test switches at a fixed step).
  ASSERT_FALSE(reply.tokens.empty());
  EXPECT_EQ(reply.tokens.front().origin, TokenOrigin::Plain);
}

TEST_F(SpecWorkbench, ThePerTokenViewColoursEachTokenByHowItCame) {
  ChatPanel& chat = *w->chat();
  // The target's first 2 of 5 layers draft: some drafts pass, some are refused and corrected.
  choose_mode("early-exit");
  edit_spin("spec_k", 4);  // a fixed k: every step drafts, whatever the drafts cost here
  edit_spin("draft_layers", 2);
  ASSERT_TRUE(answered("speculation early-exit, draft tokens 4, draft layers 2")) << panel->result_text().toStdString();
  chat.set_token_view(true);
  chat.set_sampling(SamplingParams{}, 96);
  ASSERT_TRUE(chat_turn(*w, "Once upon a time"));

  // The trace: every origin, the refused drafts just before their corrections, and the reply's text.
  const SessionMessage& reply = chat.session(chat.current_index()).messages.back();
  std::map<TokenOrigin, int> origins;
  int refused = 0;
  std::string text;
  for (size_t i = 0; i < reply.tokens.size(); ++i) {
    const TracedToken& t = reply.tokens[i];
    if (t.refused) {
      ++refused;
      ASSERT_LT(i + 1, reply.tokens.size());
      EXPECT_EQ(reply.tokens[i + 1].origin, TokenOrigin::Corrected) << "token " << i;
      continue;
    }
    ++origins[t.origin];
    text += t.text;
  }
  EXPECT_GT(origins[TokenOrigin::Accepted], 0);
  EXPECT_GT(origins[TokenOrigin::Corrected], 0);
  EXPECT_GT(refused, 0);
  EXPECT_EQ(text, reply.content);

  // The view: accepted drafts on green with p(x) and q(x), refused ones struck through.
  auto* view = chat.findChild<QTextBrowser*>("chat_view");
  ASSERT_NE(view, nullptr);
  QString accepted_tip, refused_tip;
  QTextCursor accepted_at;
  for (QTextBlock block = view->document()->begin(); block.isValid(); block = block.next()) {
    for (auto it = block.begin(); !it.atEnd(); ++it) {
      const QTextCharFormat f = it.fragment().charFormat();
      const QString colour = f.background().color().name();
      if (accepted_tip.isEmpty() && (colour == "#bbf7d0" || colour == "#dcfce7") && it.fragment().length() > 1) {
        accepted_tip = f.toolTip();
        accepted_at = QTextCursor(view->document());
        accepted_at.setPosition(it.fragment().position() + 1);
      }
      if (refused_tip.isEmpty() && f.fontStrikeOut()) refused_tip = f.toolTip();
    }
  }
  EXPECT_TRUE(accepted_tip.startsWith("accepted draft · p(x) = ")) << accepted_tip.toStdString();
  EXPECT_TRUE(accepted_tip.contains("q(x) = ")) << accepted_tip.toStdString();
  EXPECT_TRUE(refused_tip.startsWith("refused draft")) << refused_tip.toStdString();
  EXPECT_TRUE(chat.token_legend_text().contains("refused draft")) << "the legend names the colours";

  // Hovering the accepted token shows its tooltip.
  view->setTextCursor(accepted_at);
  view->ensureCursorVisible();
  const QPoint at = view->cursorRect().center();
  QHelpEvent hover(QEvent::ToolTip, at, view->viewport()->mapToGlobal(at));
  QApplication::sendEvent(view->viewport(), &hover);
  EXPECT_EQ(QToolTip::text(), accepted_tip);

  // Switched off: the reply reads as its text again, without the struck-through drafts.
  chat.set_token_view(false);
  EXPECT_TRUE(chat.token_legend_text().isEmpty());
  EXPECT_TRUE(chat.transcript().simplified().contains(QString::fromStdString(reply.content).simplified().left(40)));
}

TEST_F(SpecWorkbench, BadDraftsShowADialogAndTheEngineKeepsServing) {
  QSignalSpy errors(w.get(), &MainWindow::error_shown);

  // Early exit needs fewer layers than the target's 5 (it starts at 1).
  // Early exit waits for its layers instead of being refused.
  choose_mode("early-exit");
  EXPECT_TRUE(panel->result_text().contains("Choose how many of the target's first layers draft"))
      << panel->result_text().toStdString();
  edit_spin("draft_layers", 1);
  ASSERT_TRUE(answered("speculation early-exit, draft layers 1")) << panel->result_text().toStdString();
  const SpecConfig running = w->bridge().config().spec;
  edit_spin("draft_layers", 5);
  QString dialog = next_dialog(errors);
  EXPECT_TRUE(dialog.contains("config rejected: draft-layers must be in 1..4, got 5")) << dialog.toStdString();
  // Nothing changed: the panel shows again what the engine runs.
  EXPECT_EQ(w->bridge().config().spec, running);
  EXPECT_EQ(field<QSpinBox>("draft_layers")->value(), 1);
  ASSERT_NO_FATAL_FAILURE(expect_serving());

  // A draft with another vocabulary.
  const std::string other = dir.filePath("other-vocab.gguf").toStdString();
  ::inferscope::test::write_synthetic_model({}, other);
  choose_mode("draft");
  pick_draft_file(QString::fromStdString(other));
  dialog = next_dialog(errors);
  EXPECT_TRUE(dialog.contains("the draft's vocabulary differs from the target's")) << dialog.toStdString();
  EXPECT_EQ(w->bridge().config().spec, running);
  EXPECT_EQ(field<QComboBox>("spec")->currentText(), "early-exit");
  ASSERT_NO_FATAL_FAILURE(expect_serving());

  // k out of range, as a script could ask (the panel's box stops at 16).
  EngineConfig c = w->bridge().config();
  c.spec.mode = SpecMode::Ngram;
  c.spec.k = 17;
  w->bridge().set_config(c);
  dialog = next_dialog(errors);
  EXPECT_TRUE(dialog.contains("spec k must be auto or in 1..16, got 17")) << dialog.toStdString();
  EXPECT_EQ(w->bridge().config().spec.k, SpecConfig::kAutoK);

  // A self-quant draft that is no smaller than the weights in use (q8 over q4).
  field<QComboBox>("quant")->setCurrentText("q4");
  ASSERT_TRUE(answered("weights now q4")) << panel->result_text().toStdString();
  field<QComboBox>("draft_quant")->setCurrentText("q8");  // read once the mode uses it
  choose_mode("self-quant");
  dialog = next_dialog(errors);
  EXPECT_TRUE(dialog.contains("no smaller than the target's weights")) << dialog.toStdString();
  EXPECT_EQ(w->bridge().config().spec, running);
  EXPECT_EQ(w->bridge().config().quant, WeightQuant::Q4);
  ASSERT_NO_FATAL_FAILURE(expect_serving());
  EXPECT_EQ(errors.count(), 0) << "one dialog per refusal";
}

}  // namespace
}  // namespace inferscope::gui::test
