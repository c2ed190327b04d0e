// The Model tab's "Weights at <level>" section: each stored format's tensors and bytes, the fallbacks
// and every matrix's format, as the per-tensor policy plans them for the loaded file; rebuilt when the
// level changes and only then. A guessed chat template is said under the title.
#include <gtest/gtest.h>

#include <QTreeWidget>

#include "core/model/llama_model.h"
#include "core/quant/quant_plan.h"
#include "gui/model/model_info_panel.h"
#include "tests/gui/offscreen_app.h"
#include "tests/support/synthetic_model.h"
#include "tests/support/test_models.h"

namespace inferscope::gui::test {
namespace {

QTreeWidgetItem* child_named(QTreeWidgetItem* parent, const QString& name) {
  for (int i = 0; i < parent->childCount(); ++i) {
    if (parent->child(i)->text(0) == name) return parent->child(i);
  }
  return nullptr;
}

QTreeWidgetItem* top_level_named(QTreeWidget* tree, const QString& name) {
  for (int i = 0; i < tree->topLevelItemCount(); ++i) {
    if (tree->topLevelItem(i)->text(0) == name) return tree->topLevelItem(i);
  }
  return nullptr;
}

// 16 layers of rows of 256 (K-quants fit) with an FFN of 320 (ffn_down rows are not whole 256-blocks).
std::unique_ptr<LlamaModel> k_quant_model() {
  inferscope::test::SyntheticModelSpec spec;
  spec.dim = 256, spec.n_layers = 16, spec.ffn_dim = 320, spec.vocab = 64, spec.tied_output = true;
  return inferscope::test::load_synthetic_model(spec);
}

TEST(ModelInfoPanel, AGuessedChatTemplateIsSaidUnderTheTitle) {
  offscreen_app();
  INFERSCOPE_REQUIRE_FILE(path, ::inferscope::test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  ModelInfoPanel panel;
  panel.show_model(*model, DType::F16);
  // stories260K has no template and no turn markers: ChatML, the default, and most likely a base model.
  EXPECT_EQ(panel.notice().toStdString(), model->chat_template_notice());
  EXPECT_TRUE(panel.notice().startsWith("No chat template in the file, so the chat uses the chatml template, the default "
                                        "when the vocabulary suggests none. A model without one is usually a base model"))
      << panel.notice().toStdString();
  QTreeWidgetItem* row = child_named(top_level_named(panel.tree(), "File"), "chat template");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->text(1), "chatml (guessed)");
  EXPECT_EQ(row->toolTip(1), panel.notice());
  panel.clear();
  EXPECT_EQ(panel.notice(), "");
}

TEST(ModelInfoPanel, ATemplateFromTheFileGetsNoNotice) {
  offscreen_app();
  INFERSCOPE_REQUIRE_FILE(path, ::inferscope::test::demo_model_path());
  const auto model = LlamaModel::load(path);
  EXPECT_EQ(model->chat_template_notice(), "");
  ModelInfoPanel panel;
  panel.show_model(*model, DType::F16);
  EXPECT_EQ(panel.notice(), "");
  EXPECT_EQ(child_named(top_level_named(panel.tree(), "File"), "chat template")->text(1), "chatml");
}

TEST(ModelInfoPanel, ShowsEachMatrixFormatAtTheLevel) {
  offscreen_app();
  const auto model = k_quant_model();
  ModelInfoPanel panel;
  panel.show_model(*model, DType::F16);
  panel.show_level(*model, WeightQuant::Q4_K);
  QTreeWidgetItem* level = top_level_named(panel.tree(), "Weights at q4_k");
  ASSERT_NE(level, nullptr);

  // tied token_embd (the output head): Q6_K; attn_v Q6_K in the 8 more-bits layers of 16, Q4_K in the
  // other 8; ffn_down wants the same but its rows of 320 fall back (Q6_K -> Q8_0, Q4_K -> Q5_0); the
  // other 5 matrices of each layer Q4_K
  const std::vector<TensorFormat> plan = plan_formats(model->file(), WeightQuant::Q4_K);
  ASSERT_EQ(plan.size(), 1u + 16u * 7u);
  const auto count_row = [&](const char* type) {
    QTreeWidgetItem* r = child_named(level, type);
    return r == nullptr ? QString() : r->text(1).section(' ', 0, 0);
  };
  EXPECT_EQ(count_row("q6_K"), "9");
  EXPECT_EQ(count_row("q4_K"), QString::number(8 + 16 * 5));
  EXPECT_EQ(count_row("q8_0"), "8");
  EXPECT_EQ(count_row("q5_0"), "8");
  // Each format's bytes sit in the bytes column, as every matrix's do.
  EXPECT_EQ(child_named(level, "q6_K")->text(1), "9 tensors");
  EXPECT_FALSE(child_named(level, "q6_K")->text(3).isEmpty());
  QTreeWidgetItem* fallbacks = child_named(level, "fallbacks");
  ASSERT_NE(fallbacks, nullptr);
  EXPECT_EQ(fallbacks->text(1), "8 q6_K -> q8_0, 8 q4_K -> q5_0");

  QTreeWidgetItem* every = child_named(level, QString("Every matrix (%1)").arg(plan.size()));
  ASSERT_NE(every, nullptr);
  ASSERT_EQ(every->childCount(), static_cast<int>(plan.size()));
  QTreeWidgetItem* down0 = child_named(every, "blk.0.ffn_down.weight");
  ASSERT_NE(down0, nullptr);
  EXPECT_EQ(down0->text(1), "f32 → q8_0 (q6_K wanted)");
  EXPECT_EQ(down0->text(2), "320 × 256");
  EXPECT_EQ(child_named(every, "blk.2.attn_v.weight")->text(1), "f32 → q4_K");

  // the same level again: nothing rebuilt; another level: the section replaced, not added
  level->setExpanded(false);
  panel.show_level(*model, WeightQuant::Q4_K);
  EXPECT_FALSE(top_level_named(panel.tree(), "Weights at q4_k")->isExpanded());
  panel.show_level(*model, WeightQuant::Q8);
  EXPECT_EQ(top_level_named(panel.tree(), "Weights at q4_k"), nullptr);
  QTreeWidgetItem* q8 = top_level_named(panel.tree(), "Weights at q8");
  ASSERT_NE(q8, nullptr);
  EXPECT_EQ(child_named(q8, "q8_0")->text(1).section(' ', 0, 0), QString::number(plan.size()));
  EXPECT_EQ(child_named(q8, "fallbacks"), nullptr);
  // a new model starts without a level section
  panel.show_model(*model, DType::F16);
  EXPECT_EQ(top_level_named(panel.tree(), "Weights at q8"), nullptr);
}

}  // namespace
}  // namespace inferscope::gui::test
