// Speculative decoding's workbench parts on constructed cases: the trace that pairs verifications
// with the token stream (refused drafts before their corrections, plain tokens, a stop string
// cutting a step short), its HTML (colours, strike-through, tooltips) and its JSON, the
// speculation fields of the config editors, which A/B pairs must give identical outputs, and the
// demo script's speculation keys and steps.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QStackedWidget>
#include <QTextBlock>
#include <QTextDocument>
#include <nlohmann/json.hpp>

#include "core/engine/config_overrides.h"
#include "gui/app/demo_script.h"
#include "gui/chat/chat_session.h"
#include "gui/chat/token_trace.h"
#include "gui/chat/token_view.h"
#include "gui/compare/comparison.h"
#include "gui/config/config_fields.h"
#include "gui/config/config_panel.h"
#include "gui/config/file_picker.h"
#include "tests/gui/workbench_fixture.h"

namespace inferscope::gui::test {
namespace {

EmittedToken emitted(TokenId id, TokenOrigin origin, float p, float q = 0) { return {id, origin, p, q}; }

// A step whose drafts 7 and 8 passed and whose third draft (9, "ox") was refused for 3.
Verification refused_third() {
  Verification v;
  v.emitted = {emitted(7, TokenOrigin::Accepted, 0.9f, 0.8f), emitted(8, TokenOrigin::Accepted, 0.7f, 0.6f),
               emitted(3, TokenOrigin::Corrected, 0.5f)};
  v.accepted = 2;
  v.rejected = true;
  v.refused = emitted(9, TokenOrigin::Plain, 0.01f, 0.95f);
  return v;
}

std::string shown_text(const std::vector<TracedToken>& trace) {
  std::string text;
  for (const TracedToken& t : trace)
    if (!t.refused) text += t.text;
  return text;
}

TEST(SpecTrace, RefusedDraftsStandBeforeTheirCorrection) {
  TraceBuilder b;
  std::vector<TracedToken> trace;
  b.token(trace, "A", 1);  // no verification yet: a plain decode
  b.verified(refused_third(), "ox");
  b.token(trace, " b", 7);
  b.token(trace, "ig", 8);
  b.token(trace, " d", 3);
  b.token(trace, "og", 4);  // the next step drafted nothing
  ASSERT_EQ(trace.size(), 6u);
  EXPECT_EQ(trace[0].origin, TokenOrigin::Plain);
  EXPECT_EQ(trace[1].origin, TokenOrigin::Accepted);
  EXPECT_FLOAT_EQ(trace[1].p, 0.9f);
  EXPECT_FLOAT_EQ(trace[1].q, 0.8f);
  EXPECT_EQ(trace[2].origin, TokenOrigin::Accepted);
  EXPECT_TRUE(trace[3].refused);
  EXPECT_EQ(trace[3].text, "ox");
  EXPECT_FLOAT_EQ(trace[3].p, 0.01f);
  EXPECT_FLOAT_EQ(trace[3].q, 0.95f);
  EXPECT_EQ(trace[4].origin, TokenOrigin::Corrected);
  EXPECT_FALSE(trace[4].refused);
  EXPECT_EQ(trace[5].origin, TokenOrigin::Plain);
  EXPECT_EQ(shown_text(trace), "A big dog");
}

TEST(SpecTrace, AStopStringCutsAStepShortAndHeldTextJoinsTheLastToken) {
  TraceBuilder b;
  std::vector<TracedToken> trace;
  Verification all_passed;
  all_passed.emitted = {emitted(7, TokenOrigin::Accepted, 1, 1), emitted(5, TokenOrigin::Bonus, 1)};
  all_passed.accepted = 1;
  b.verified(all_passed, "");
  b.token(trace, "x", 7);
  // A stop string ended the step after one token; the next step's tokens are its own.
  b.verified(refused_third(), "ox");
  b.token(trace, "y", 7);
  b.token(trace, "", -1);
  b.token(trace, "z", -1);
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[0].origin, TokenOrigin::Accepted);
  EXPECT_EQ(trace[1].origin, TokenOrigin::Accepted);
  EXPECT_EQ(trace[1].text, "yz");
  // A bonus token after every draft passed; no refused draft in that step.
  TraceBuilder c;
  std::vector<TracedToken> bonus;
  c.verified(all_passed, "");
  c.token(bonus, "a", 7);
  c.token(bonus, "b", 5);
  ASSERT_EQ(bonus.size(), 2u);
  EXPECT_EQ(bonus[1].origin, TokenOrigin::Bonus);
}

TEST(SpecTrace, TheViewColoursStrikesAndExplainsEachToken) {
  offscreen_app();
  const std::vector<TracedToken> trace = {{"Hi", TokenOrigin::Plain, false, 0, 0},
                                          {" there", TokenOrigin::Accepted, false, 0.9f, 0.8f},
                                          {"\n", TokenOrigin::Accepted, true, 0.01f, 0.95f},
                                          {" <you>", TokenOrigin::Corrected, false, 0.5f, 0},
                                          {"!", TokenOrigin::Bonus, false, 0.75f, 0}};
  QTextDocument doc;
  doc.setHtml(token_view_html(trace));
  std::map<QString, QTextCharFormat> by_text;
  for (QTextBlock block = doc.begin(); block.isValid(); block = block.next())
    for (auto it = block.begin(); !it.atEnd(); ++it) by_text[it.fragment().text()] = it.fragment().charFormat();
  ASSERT_TRUE(by_text.contains(" there"));
  EXPECT_EQ(by_text[" there"].background().color().name(), "#dcfce7");
  EXPECT_EQ(by_text[" there"].toolTip(), "accepted draft · p(x) = 0.900 · q(x) = 0.800");
  EXPECT_EQ(by_text["Hi"].toolTip(), "plain: decoded without a draft");
  // The refused line break is a mark, not a break of the reply.
  ASSERT_TRUE(by_text.contains("↵"));
  EXPECT_TRUE(by_text["↵"].fontStrikeOut());
  EXPECT_EQ(by_text["↵"].toolTip(), "refused draft: the target did not take it · p(x) = 0.010 · q(x) = 0.950");
  EXPECT_TRUE(by_text[" <you>"].toolTip().startsWith("corrected: ")) << "escaped text, its own tooltip";
  EXPECT_EQ(by_text["!"].toolTip(), "bonus: the target's own token after every draft passed · p(x) = 0.750");
  EXPECT_TRUE(doc.toPlainText().contains("plain 1 · accepted draft 1 · corrected 1 · bonus 1 · refused draft 1"))
      << doc.toPlainText().toStdString();
  EXPECT_TRUE(token_view_legend().contains("refused draft"));
  EXPECT_TRUE(token_view_legend().contains("bonus"));
}

TEST(SpecTrace, TracesRoundTripThroughTheSessionJson) {
  ChatSession s;
  s.id = "t1";
  s.name = "trace";
  s.messages = {{"user", "hi", {}, {}, {}, {}},
                {"assistant", "Hi there", {}, {{"Hi", TokenOrigin::Plain, false, 0, 0},
                                               {"ox", TokenOrigin::Plain, true, 0.0123456f, 0.9f},
                                               {" there", TokenOrigin::Corrected, false, 0.5f, 0}},
                 {},
                 {}}};
  const nlohmann::json j = session_to_json(s);
  const ChatSession back = session_from_json(j, "s.json");
  ASSERT_EQ(back.messages[1].tokens.size(), 3u);
  EXPECT_TRUE(back.messages[1].tokens[1].refused);
  EXPECT_FLOAT_EQ(back.messages[1].tokens[1].p, 0.0123f);  // 4 decimals are kept
  EXPECT_EQ(back.messages[1].tokens[2].origin, TokenOrigin::Corrected);
  EXPECT_EQ(session_to_json(back), j);
  EXPECT_TRUE(back.messages[0].tokens.empty());

  nlohmann::json bad = j;
  bad["messages"][1]["tokens"][2]["origin"] = "guessed";
  try {
    session_from_json(bad, "s.json");
    ADD_FAILURE() << "an unknown origin was read";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "s.json: messages[1]: tokens[2]: unknown origin \"guessed\"");
  }
}

template <typename Widget>
Widget* setting_field(const ConfigFields& fields, const char* key) {
  return qobject_cast<Widget*>(fields.field(key));
}

TEST(SpecFieldsTest, ShowReadAndWhatTheModeNeeds) {
  offscreen_app();
  ConfigFields fields;
  auto* mode = setting_field<QComboBox>(fields, "spec");
  auto* k = setting_field<QSpinBox>(fields, "spec_k");
  auto* draft_layers = setting_field<QSpinBox>(fields, "draft_layers");
  auto* draft_p_min = setting_field<QDoubleSpinBox>(fields, "draft_p_min");
  auto* draft_model = setting_field<FilePicker>(fields, "draft_model");
  ASSERT_TRUE(mode && k && draft_layers && draft_p_min && draft_model);
  EngineConfig c;
  c.spec.mode = SpecMode::Ngram;
  c.spec.k = 6;
  c.spec.ngram_min = 1;
  c.spec.ngram_max = 3;
  fields.show(c);
  EXPECT_EQ(mode->currentText(), "ngram");
  EXPECT_EQ(fields.drafter->currentIndex(), static_cast<int>(SpecMode::Ngram));
  EXPECT_TRUE(k->isEnabled());
  EXPECT_FALSE(draft_p_min->isEnabled()) << "n-gram drafts have no probability to stop at";
  EXPECT_EQ(fields.read(EngineConfig{}).spec, c.spec);

  // Only what the shown mode uses is read: the early-exit layers do not leak into ngram.
  draft_layers->setValue(3);
  EXPECT_EQ(fields.read(c).spec.draft_layers, 0);
  mode->setCurrentText("early-exit");
  fields.refresh_enabled();
  EXPECT_EQ(fields.drafter->currentWidget(), draft_layers);
  EXPECT_EQ(fields.read(c).spec.draft_layers, 3);
  EXPECT_TRUE(draft_p_min->isEnabled());
  // Early exit without its layers is not complete yet.
  EXPECT_TRUE(fields.missing().isEmpty());
  draft_layers->setValue(0);
  EXPECT_TRUE(fields.missing().startsWith("Choose how many of the target's first layers draft"));
  draft_layers->setValue(3);

  // A draft mode without its file is not complete yet.
  EXPECT_TRUE(fields.missing().isEmpty());
  mode->setCurrentText("draft");
  EXPECT_TRUE(fields.missing().startsWith("Choose the draft model file")) << fields.missing().toStdString();
  draft_model->set_path("/models/draft.gguf");
  EXPECT_TRUE(fields.missing().isEmpty());
  EXPECT_EQ(fields.read(c).spec.draft_model, "/models/draft.gguf");

  // Every speculation setting has its row and its line of explanation (the drafter's fields share one).
  int spec_rows = 0;
  for (const ConfigFields::Row& row : fields.rows()) {
    if (row.section != "Speculative decoding") continue;
    ++spec_rows;
    EXPECT_GT(row.explanation.size(), 40) << row.label.toStdString();
  }
  EXPECT_EQ(spec_rows, 4);
}

TEST(SpecCompare, GreedySpeculationIsAnExactFeatureSamplingIsNot) {
  EngineConfig a, b;
  b.spec.mode = SpecMode::EarlyExit;
  b.spec.draft_layers = 2;
  b.kv.kind = KvKind::Contiguous;
  SamplingParams greedy, sampled;
  sampled.temperature = 0.8f;
  EXPECT_TRUE(outputs_must_match(a, b, greedy));
  EXPECT_FALSE(outputs_must_match(a, b, sampled)) << "sampling keeps the distribution, not the text";
  a.spec = b.spec;
  EXPECT_TRUE(outputs_must_match(a, b, sampled)) << "the same proposer draws the same";
  b.attention = "naive";
  EXPECT_FALSE(outputs_must_match(a, b, greedy));
  b.attention = a.attention;
  b.quant = WeightQuant::Q8;
  EXPECT_FALSE(outputs_must_match(a, b, greedy));
}

TEST(SpecDemoScript, SpeculationKeysAndStepsAreCheckedBeforeRunning) {
  const EngineConfig c = apply_config_overrides(
      {}, {{"spec", "self-quant"}, {"spec_k", 6}, {"draft_quant", "q8"}, {"draft_p_min", 0.2}}, "demo.json: steps[0]");
  EXPECT_EQ(c.spec.mode, SpecMode::SelfQuant);
  EXPECT_EQ(c.spec.k, 6);
  EXPECT_EQ(c.spec.draft_quant, WeightQuant::Q8);
  EXPECT_FLOAT_EQ(c.spec.draft_p_min, 0.2f);
  try {
    apply_config_overrides({}, {{"spec", "psychic"}}, "demo.json: steps[0]");
    ADD_FAILURE() << "an unknown mode was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "demo.json: steps[0]: config: 'spec': \"psychic\" is not one of none, ngram, draft, self-quant, "
                           "early-exit");
  }

  QTemporaryDir dir;
  auto w = open_window(dir.path());
  EXPECT_THROW(DemoScript(*w, {{"steps", {{{"token_view", "yes"}}}}}, "demo.json", dir.filePath("out.png")),
               std::runtime_error);
  const nlohmann::json script =
      DemoScript::read_file(QString(INFERSCOPE_SOURCE_DIR) + "/resources/demo/speculative-demo.json");
  EXPECT_NO_THROW(DemoScript(*w, script, "speculative-demo.json", dir.filePath("out.png")));
  EXPECT_TRUE(w->show_plot("spec_decode"));
  EXPECT_FALSE(w->show_plot("nonsense"));
  // Revealed at a laptop's size: the panel scrolls down to it, never sideways.
  w->resize(1280, 720);
  QApplication::processEvents();
  EXPECT_TRUE(w->config_panel()->reveal("spec"));
  for (QScrollArea* scroll : w->config_panel()->findChildren<QScrollArea*>())
    EXPECT_EQ(scroll->horizontalScrollBar()->value(), 0);
}

}  // namespace
}  // namespace inferscope::gui::test
