// The Compare A/B tab on stories260K through the real runner: exact features (paged against
// contiguous, block size, budget) give identical greedy outputs and a filled delta table and overlaid
// charts; greedy speculation (a per-side toggle) gives identical outputs too, and the headline says
// the exact features promised it; the outputs pane says which changes may diverge (attention,
// quantization); q4 weights are measured and their outputs judged token by token; the current chat
// compares as one request; every workload is described before it runs; a run clears the shown result
// and a cancelled one puts it back; cancel ends a run; export writes JSON and PNG; the tab warns when A and B
// differ in several settings; a contiguous side greys out block size and prefix cache as the Chat
// tab's panel does. And the quantization toggle during a chat: the engine converts, says "weights
// now q8", and the status bar shows the level.
#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <algorithm>
#include <qcustomplot.h>

#include <nlohmann/json.hpp>

#include "gui/compare/compare_view.h"
#include "gui/config/config_panel.h"
#include "gui/dashboard/metrics_dashboard.h"
#include "gui/dashboard/request_timeline.h"
#include "tests/gui/compare_fixture.h"

namespace inferscope::gui::test {
namespace {

// The darkest grey level (0 black .. 255 white) in `image`: where a widget's text is drawn.
int darkest(const QImage& image) {
  int out = 255;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) out = std::min(out, qGray(image.pixel(x, y)));
  return out;
}

struct Compare : CompareWindow {
  // The engine's config with `edit` applied.
  template <typename F>
  EngineConfig config(F edit) {
    EngineConfig c = w->bridge().config();
    edit(c);
    return c;
  }
};

TEST_F(Compare, ExactFeaturesGiveIdenticalOutputsAndFillEveryView) {
  // Exact features only: naive vs flash attention sums in another order, so it is not among them.
  view->set_configs(config([](EngineConfig& c) { c.kv.kind = KvKind::Paged; c.kv.block_size = 8; }),
                    config([](EngineConfig& c) { c.kv.kind = KvKind::Contiguous; c.kv.budget_bytes /= 2; }));
  view->use_workload_file(write_workload(dir, 3));
  view->set_runs_per_side(2);
  ASSERT_TRUE(run_comparison(*view)) << view->status_text().toStdString();
  const Comparison* c = view->result();
  ASSERT_NE(c, nullptr) << view->status_text().toStdString();

  // Two runs of each side, alternating; greedy exact features give the same tokens every run.
  ASSERT_EQ(c->reruns_a.size(), 1u);
  ASSERT_EQ(c->reruns_b.size(), 1u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(c->reruns_b[0].outputs[i].tokens, c->a.outputs[i].tokens) << i;
  const QLabel* headline = view->findChild<QLabel*>("compare_headline");
  EXPECT_TRUE(headline->text().contains("2 runs per side: medians")) << headline->text().toStdString();

  // Both result sets, run to their output length.
  EXPECT_EQ(c->a.config.kv.kind, KvKind::Paged);
  EXPECT_EQ(c->b.config.kv.kind, KvKind::Contiguous);
  EXPECT_EQ(c->b.config.attention, c->a.config.attention);
  EXPECT_EQ(c->a.config.kv.block_size, 8);
  EXPECT_LT(c->b.config.kv.budget_bytes, c->a.config.kv.budget_bytes);
  ASSERT_EQ(c->a.outputs.size(), 3u);
  ASSERT_EQ(c->b.outputs.size(), 3u);
  EXPECT_EQ(c->a.summary.requests_finished, 3);
  EXPECT_EQ(c->b.summary.requests_finished, 3);
  for (const WorkloadOutput& out : c->a.outputs) EXPECT_EQ(out.tokens.size(), 24u);

  // Greedy runs of exact features never diverge, and the view says so for every request.
  ASSERT_EQ(c->outputs.size(), 3u);
  for (const OutputPair& p : c->outputs) EXPECT_EQ(p.divergence, -1) << "request " << p.id;
  EXPECT_EQ(view->outputs_text().count("identical"), 3) << view->outputs_text().toStdString();
  EXPECT_FALSE(view->outputs_text().contains("diverges"));
  // Its prompts are pseudo-random ids: the outputs pane says so and shows no text.
  EXPECT_EQ(view->outputs_text().count("synthetic prompt"), 3);
  for (const OutputPair& p : c->outputs) EXPECT_TRUE(p.synthetic_prompt) << p.id;

  // The delta table: every figure of both runs; contiguous reserves whole contexts, paged does not.
  QTableWidget& table = *view->delta_table();
  ASSERT_EQ(table.rowCount(), 12);
  for (int row = 0; row < table.rowCount(); ++row) {
    for (int col = 0; col < 5; ++col) ASSERT_NE(table.item(row, col), nullptr) << row << "," << col;
  }
  EXPECT_EQ(table.item(0, 0)->text(), "throughput");
  EXPECT_EQ(table.item(7, 0)->text(), "reserved-unused mean");
  EXPECT_EQ(c->a.summary.kv_reserved_unused_perc_mean, 0);
  EXPECT_GT(c->b.summary.kv_reserved_unused_perc_mean, 0.5);
  // Paged fragments its last blocks, contiguous reserves whole contexts: neither figure is called better
  // or worse, and each row says why.
  EXPECT_EQ(table.item(6, 0)->text(), "fragmentation mean");
  for (int row : {4, 5, 6, 7}) {
    EXPECT_FALSE(table.item(row, 4)->data(Qt::ForegroundRole).isValid()) << table.item(row, 0)->text().toStdString();
    EXPECT_TRUE(table.item(row, 4)->toolTip().startsWith("Not coloured")) << row;
  }
  // Throughput has a direction: coloured when B's runs lie beyond A's, otherwise its tooltip gives both ranges.
  const DeltaVerdict throughput = delta_verdict(comparison_deltas(*c).front());
  if (throughput == DeltaVerdict::WithinSpread) {
    EXPECT_TRUE(table.item(0, 4)->toolTip().contains("A's 2 runs gave")) << table.item(0, 4)->toolTip().toStdString();
  } else {
    EXPECT_TRUE(table.item(0, 4)->data(Qt::ForegroundRole).isValid());
  }
  EXPECT_EQ(table.item(11, 0)->text(), "attention scratch peak");

  // The charts hold A and, dashed, B.
  QCustomPlot* usage = view->dashboard()->plot("kv_usage");
  ASSERT_NE(usage, nullptr);
  int with_points = 0;
  for (int i = 0; i < usage->graphCount(); ++i) with_points += usage->graph(i)->dataCount() > 0;
  EXPECT_GE(with_points, 2);
}

TEST_F(Compare, AContiguousSideGreysOutBlockSizeAndPrefixCache) {
  view->set_configs(config([](EngineConfig& c) { c.kv.kind = KvKind::Paged; }),
                    config([](EngineConfig& c) { c.kv.kind = KvKind::Contiguous; }));
  for (const char* name : {"block_size", "prefix_cache"}) {
    QWidget* paged = view->findChild<QWidget*>(QString("a_") + name);
    QWidget* contiguous = view->findChild<QWidget*>(QString("b_") + name);
    ASSERT_NE(paged, nullptr) << name;
    ASSERT_NE(contiguous, nullptr) << name;
    EXPECT_TRUE(paged->isEnabled()) << name;
    EXPECT_FALSE(contiguous->isEnabled()) << name;
    // Greyed as the Chat tab's panel draws it: the same field's text is lighter when disabled.
    const int enabled_ink = darkest(render(*paged, QString("compare_a_") + name));
    const int disabled_ink = darkest(render(*contiguous, QString("compare_b_") + name));
    EXPECT_LT(enabled_ink, 60) << name;
    EXPECT_GT(disabled_ink, enabled_ink + 40) << name << " draws as if enabled";
  }
  // Switching B to paged in its editor enables them again.
  view->findChild<QComboBox*>("b_kv")->setCurrentText("paged");
  EXPECT_TRUE(view->findChild<QWidget*>("b_block_size")->isEnabled());
  EXPECT_TRUE(view->findChild<QWidget*>("b_prefix_cache")->isEnabled());
}

TEST_F(Compare, TheTabWarnsWhenAAndBDifferInMoreThanOneSetting) {
  w->tabs()->setCurrentWidget(view);
  auto* note = view->findChild<QLabel*>("compare_attribution");
  ASSERT_NE(note, nullptr);
  // The default pair differs in the KV manager alone: what changes is its effect, no warning.
  view->reset_configs(w->bridge().config());
  EXPECT_TRUE(note->isHidden()) << note->text().toStdString();

  // Two more changes in B's editor, as a user makes them.
  view->findChild<QComboBox*>("b_attention")->setCurrentText("naive");
  view->findChild<QComboBox*>("b_quant")->setCurrentText("q8");
  const QString warning = "A and B differ in 3 settings (KV, attention, weights): differences cannot be attributed to one of them";
  EXPECT_TRUE(note->isVisible());
  EXPECT_TRUE(note->text().contains(warning)) << note->text().toStdString();
  EXPECT_FALSE(render(*note, "compare_attribution").isNull());

  // Identical configurations get a note instead.
  view->set_configs(w->bridge().config(), w->bridge().config());
  EXPECT_TRUE(note->isVisible());
  EXPECT_TRUE(note->text().contains("A and B are identical")) << note->text().toStdString();

  // A run of three differences: its headline and its export say so.
  view->set_configs(w->bridge().config(), config([](EngineConfig& c) {
                      c.kv.kind = KvKind::Contiguous;
                      c.attention = "naive";
                      c.quant = WeightQuant::Q8;
                    }));
  view->use_workload_file(write_workload(dir, 1, 8));
  ASSERT_TRUE(run_comparison(*view)) << view->status_text().toStdString();
  const QString headline = view->findChild<QLabel*>("compare_headline")->text();
  EXPECT_TRUE(headline.contains(warning)) << headline.toStdString();
  EXPECT_TRUE(note->isHidden()) << "the warning shows once, in the headline";
  view->findChild<QComboBox*>("b_attention")->setCurrentText("flash");
  EXPECT_TRUE(note->isVisible()) << "a setup that no longer matches the result says what it allows";
  view->findChild<QComboBox*>("b_attention")->setCurrentText("naive");
  QString error;
  ASSERT_TRUE(view->export_to(dir.filePath("three.json"), &error)) << error.toStdString();
  QFile file(dir.filePath("three.json"));
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QByteArray bytes = file.readAll();
  const nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end());
  EXPECT_EQ(j["attribution_note"], warning.toStdString());
  EXPECT_EQ(j["differing_settings"], nlohmann::json({"KV", "attention", "weights"}));
}

TEST_F(Compare, GreedySpeculationIsATogglePerSideAndGivesIdenticalOutputs) {
  view->set_configs(w->bridge().config(), w->bridge().config());
  // B speculates, set in its editor as a user would: early exit after 2 of 5 layers (drafts refused too).
  view->findChild<QComboBox*>("b_spec")->setCurrentText("early-exit");
  view->findChild<QSpinBox*>("b_draft_layers")->setValue(2);
  view->findChild<QSpinBox*>("b_spec_k")->setValue(4);  // a fixed k: every step drafts, whatever the drafts cost
  EXPECT_EQ(view->config_b().spec.mode, SpecMode::EarlyExit);
  EXPECT_EQ(view->config_b().spec.draft_layers, 2);
  EXPECT_EQ(view->config_a().spec.mode, SpecMode::None);
  view->use_workload_file(write_workload(dir, 3, 40));
  ASSERT_TRUE(run_comparison(*view)) << view->status_text().toStdString();
  const Comparison* c = view->result();
  ASSERT_NE(c, nullptr) << view->status_text().toStdString();
  EXPECT_EQ(c->a.metrics.spec.num_drafts, 0);
  EXPECT_GT(c->b.metrics.spec.num_drafts, 0);
  EXPECT_LT(c->b.metrics.spec.acceptance_rate(), 1.0) << "some drafts were refused";

  // Greedy speculation is exact: the same tokens, and the view promises no less.
  for (const OutputPair& p : c->outputs) EXPECT_EQ(p.divergence, -1) << "request " << p.id;
  EXPECT_EQ(view->outputs_text().count("identical"), 3) << view->outputs_text().toStdString();
  const QString headline = view->findChild<QLabel*>("compare_headline")->text();
  EXPECT_TRUE(headline.contains("outputs identical, as the exact features promise")) << headline.toStdString();
  EXPECT_TRUE(headline.contains("spec early-exit k=4 (2 layers)")) << headline.toStdString();
  // The delta table gains the acceptance rows; the acceptance panels show B beside A.
  QTableWidget& table = *view->delta_table();
  ASSERT_EQ(table.rowCount(), 14);
  EXPECT_EQ(table.item(12, 0)->text(), "acceptance rate");
  EXPECT_EQ(table.item(13, 0)->text(), "mean acceptance length");
  QCustomPlot* by_position = view->dashboard()->plot("spec_decode");
  int b_bars = -1;
  for (int i = 0; i < by_position->plottableCount(); ++i)
    if (by_position->plottable(i)->name() == "acceptance · B") b_bars = by_position->plottable(i)->interface1D()->dataCount();
  EXPECT_EQ(b_bars, 4);
}

TEST_F(Compare, TheOutputsPaneSaysWhichChangesMayDiverge) {
  const QString note = view->outputs_text();
  EXPECT_TRUE(note.contains("give bit-identical logits, so greedy outputs are identical")) << note.toStdString();
  EXPECT_TRUE(note.contains("attention naive vs flash sums in another order")) << note.toStdString();
  EXPECT_TRUE(note.contains("may diverge")) << note.toStdString();
  EXPECT_FALSE(note.contains("never diverge")) << note.toStdString();
  EXPECT_TRUE(note.contains("with sampling it keeps the target's distribution, not its text")) << note.toStdString();
}

TEST_F(Compare, QuantizedWeightsAreMeasuredAndJudgedTokenByToken) {
  view->set_configs(config([](EngineConfig& c) { c.quant = WeightQuant::Native; }),
                    config([](EngineConfig& c) { c.quant = WeightQuant::Q4; }));
  view->use_workload_file(write_workload(dir, 2, 48));
  ASSERT_TRUE(run_comparison(*view)) << view->status_text().toStdString();
  const Comparison* c = view->result();
  ASSERT_NE(c, nullptr) << view->status_text().toStdString();
  EXPECT_EQ(c->a.metrics.weights_quant, "native");
  EXPECT_EQ(c->b.metrics.weights_quant, "q4");
  EXPECT_LT(c->b.metrics.weight_bytes, c->a.metrics.weight_bytes);
  // Whatever q4 does to the text, each verdict matches the token lists (the marker logic itself is
  // checked on constructed cases in compare_parts_test).
  const QString shown = view->outputs_text();
  for (const OutputPair& p : c->outputs) {
    EXPECT_EQ(p.divergence, first_divergence(c->a.outputs[static_cast<size_t>(p.id)].tokens,
                                             c->b.outputs[static_cast<size_t>(p.id)].tokens));
    EXPECT_TRUE(shown.contains(QString::fromStdString(divergence_text(p.divergence)))) << shown.toStdString();
  }
}

TEST_F(Compare, TheCurrentChatComparesAsOneRequest) {
  w->chat()->set_sampling(SamplingParams{}, 32);
  ASSERT_TRUE(chat_turn(*w, "Once upon a time"));
  view->use_chat_workload();
  ASSERT_TRUE(run_comparison(*view)) << view->status_text().toStdString();
  const Comparison* c = view->result();
  ASSERT_NE(c, nullptr) << view->status_text().toStdString();
  EXPECT_EQ(c->workload, "chat: " + w->chat()->session(w->chat()->current_index()).name);
  ASSERT_EQ(c->outputs.size(), 1u);
  EXPECT_GT(c->outputs[0].a.tokens, 0);
  EXPECT_LE(c->outputs[0].a.tokens, 32);
  // Greedy, the same prompt and an exact feature change: A repeats the chat's own greedy reply.
  EXPECT_EQ(c->outputs[0].divergence, -1);
  EXPECT_EQ(c->a.outputs[0].text, w->chat()->session(w->chat()->current_index()).messages[1].content);
}

TEST_F(Compare, EveryWorkloadIsDescribedBeforeItRuns) {
  view->use_chat_workload();
  EXPECT_TRUE(view->workload_description().startsWith("The current chat session")) << view->workload_description().toStdString();
  // A shipped workload: its own description, then what its requests are.
  view->use_workload_file(QString(INFERSCOPE_SOURCE_DIR) + "/resources/workloads/mixed.json");
  const QString mixed = view->workload_description();
  EXPECT_TRUE(mixed.startsWith("A serving mix")) << mixed.toStdString();
  EXPECT_TRUE(mixed.contains("32 requests arriving over 1.60 s. 30 of the prompts are synthetic")) << mixed.toStdString();
  // A file that cannot be read says why, naming the file and field, before anything runs.
  const QString broken = dir.filePath("broken.json");
  QFile file(broken);
  ASSERT_TRUE(file.open(QIODevice::WriteOnly));
  file.write(R"({"requests": [{"prompt": "a"}]})");
  file.close();
  view->use_workload_file(broken);
  EXPECT_EQ(view->workload_description(),
            "Cannot read this workload: " + broken + ": request 0: \"output_tokens\" is missing");
}

TEST_F(Compare, ARunClearsTheShownResultAndACancelledOnePutsItBack) {
  view->use_workload_file(write_workload(dir, 2, 8));
  ASSERT_TRUE(run_comparison(*view)) << view->status_text().toStdString();
  const Comparison* first = view->result();
  ASSERT_NE(first, nullptr);
  const QLabel* headline = view->findChild<QLabel*>("compare_headline");
  const QString shown = headline->text();
  ASSERT_GT(view->delta_table()->rowCount(), 0);

  // While the next run goes on, nothing of the last one is on screen.
  view->use_workload_file(write_workload(dir, 16, 400));
  QSignalSpy ended(view, &CompareView::run_ended);
  ASSERT_TRUE(view->start());
  EXPECT_TRUE(headline->text().contains("Running")) << headline->text().toStdString();
  EXPECT_EQ(view->delta_table()->rowCount(), 0);
  EXPECT_FALSE(view->outputs_text().contains("request 0")) << view->outputs_text().toStdString();
  QCustomPlot* usage = view->dashboard()->plot("kv_usage");
  int points = 0;
  for (int i = 0; i < usage->graphCount(); ++i) points += usage->graph(i)->dataCount();
  EXPECT_EQ(points, 0) << "the charts still show the last result";
  EXPECT_TRUE(view->dashboard()->timeline()->lanes().empty());

  // Cancelled: the previous result comes back, and the status says so.
  view->cancel();
  ASSERT_TRUE(wait_for([&] { return ended.count() > 0; }, 20000));
  EXPECT_EQ(view->result(), first);
  EXPECT_EQ(headline->text(), shown);
  EXPECT_GT(view->delta_table()->rowCount(), 0);
  EXPECT_TRUE(view->status_text().startsWith("Cancelled; the previous result is shown again"))
      << view->status_text().toStdString();
}

TEST_F(Compare, CancelEndsTheRunWithoutResults) {
  view->use_workload_file(write_workload(dir, 16, 400));
  QSignalSpy ended(view, &CompareView::run_ended);
  ASSERT_TRUE(view->start());
  EXPECT_TRUE(view->running());
  EXPECT_FALSE(view->start()) << "a second run must not start while one runs";
  view->cancel();
  ASSERT_TRUE(wait_for([&] { return ended.count() > 0; }, 20000));
  EXPECT_FALSE(view->running());
  EXPECT_EQ(view->result(), nullptr);
  EXPECT_TRUE(view->status_text().startsWith("Cancelled")) << view->status_text().toStdString();
}

TEST_F(Compare, ExportWritesTheComparisonAsJsonAndPng) {
  QString error;
  EXPECT_FALSE(view->export_to(dir.filePath("none.json"), &error));
  view->use_workload_file(write_workload(dir, 2));
  ASSERT_TRUE(run_comparison(*view)) << view->status_text().toStdString();
  ASSERT_TRUE(view->export_to(dir.filePath("ab.json"), &error)) << error.toStdString();

  QFile file(dir.filePath("ab.json"));
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QByteArray bytes = file.readAll();
  const nlohmann::json j = nlohmann::json::parse(bytes.begin(), bytes.end());
  EXPECT_EQ(j["format"], "inferscope-comparison-1");
  EXPECT_EQ(j["workload"], "tiny.json");
  EXPECT_EQ(j["a"]["config"]["kv"], "paged");
  EXPECT_EQ(j["b"]["config"]["kv"], "contiguous");
  EXPECT_EQ(j["a"]["requests"].size(), 2u);
  EXPECT_FALSE(j["b"]["step_timeline"].empty());
  EXPECT_EQ(j["deltas"].size(), 12u);
  ASSERT_EQ(j["outputs"].size(), 2u);
  EXPECT_EQ(j["outputs"][0]["verdict"], "identical");
  EXPECT_EQ(j["sampling"]["temperature"], 0.0);

  const QImage png(dir.filePath("ab.png"));
  EXPECT_FALSE(png.isNull());
  EXPECT_GT(distinct_colors(png), 10);
}

TEST_F(Compare, SwitchingQuantizationDuringAChatConvertsAndShowsTheLevel) {
  w->chat()->set_sampling(SamplingParams{}, 400);
  w->chat()->set_input_text("Once upon a time");
  w->chat()->send();
  ASSERT_TRUE(wait_for([&] { return w->chat()->streaming_tokens(w->chat()->current_index()) > 0; }));
  auto* quant = w->config_panel()->findChild<QComboBox*>("quant");
  ASSERT_NE(quant, nullptr);
  ASSERT_TRUE(quant->isEnabled());
  quant->setCurrentText("q8");
  EXPECT_TRUE(wait_for([&] { return w->config_panel()->result_text().contains("weights now q8"); }))
      << w->config_panel()->result_text().toStdString();
  EXPECT_TRUE(wait_for([&] { return w->status_text().contains("weights q8"); })) << w->status_text().toStdString();
  EXPECT_TRUE(w->config_panel()->weights_text().startsWith("weights in use: q8")) << w->config_panel()->weights_text().toStdString();
  EXPECT_EQ(w->bridge().config().quant, WeightQuant::Q8);
  ASSERT_TRUE(wait_for([&] { return w->chat()->requests_in_flight() == 0; }));
  const ChatSession& s = w->chat()->session(w->chat()->current_index());
  EXPECT_EQ(s.messages.back().role, "assistant");
  EXPECT_GT(s.messages.back().stats.tokens, 0);
}

}  // namespace
}  // namespace inferscope::gui::test
