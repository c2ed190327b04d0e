// The Learn tab's experiment-specific views, from real runs on stories260K: the prompts with the part
// the prefix cache supplied highlighted, the speculating output coloured token by token, the KV
// picture's formula in the model's numbers, and the attention sweep's lines holding the sweep's rows.
#include <gtest/gtest.h>

#include <QTextDocument>
#include <qcustomplot.h>

#include "core/learn/experiment_runner.h"
#include "core/model/llama_model.h"
#include "gui/learn/experiment_plots.h"
#include "gui/learn/kv_token_picture.h"
#include "gui/learn/run_texts.h"
#include "tests/gui/offscreen_app.h"
#include "tests/support/test_models.h"

namespace inferscope::gui::test {
namespace {

using inferscope::test::shared_model_path;
using inferscope::test::source_path;

struct Ran {
  std::unique_ptr<LlamaModel> model;
  Experiment experiment;
  ExperimentResult result;
  const MeasuredRun& run(const std::string& name) const {
    return *std::find_if(result.runs.begin(), result.runs.end(), [&](const MeasuredRun& m) { return m.name == name; });
  }
};

Ran run(const std::string& path, const std::string& id) {
  Ran r{LlamaModel::load(path), Experiment::load(source_path("resources/experiments/" + id + ".json")), {}};
  r.result = run_experiment(r.experiment, *r.model, EngineConfig{});
  return r;
}

QString plain(const QString& html) {
  QTextDocument doc;
  doc.setHtml(html);
  return doc.toPlainText();
}

TEST(LearnPlots, PrefixHitsHighlightTheCachedPromptText) {
  offscreen_app();
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const Ran r = run(path, "4-prefix-caching");
  const MeasuredRun& on = r.run("on");
  const std::map<RequestId, int32_t> cached = prefix_cached_tokens(on.result.metrics);
  int32_t total = 0;
  for (const auto& [id, n] : cached) total += n;
  EXPECT_EQ(total, on.result.summary.prefix_cache_hits);  // every hit belongs to one request's admission
  const QString html = prefix_hits_html(on, *r.model);
  for (const Request& request : on.requests) {
    const int32_t n = cached.at(request.id);
    EXPECT_NE(html.indexOf(QString("%1 of %2 prompt tokens cached").arg(n).arg(request.tokens.size())), -1) << request.id;
    if (n == 0) continue;
    // The highlighted span is exactly the cached tokens' text.
    const std::string head = r.model->tokenizer().decode(std::vector<TokenId>(request.tokens.begin(), request.tokens.begin() + n));
    EXPECT_NE(html.indexOf("background-color:#bbf7d0;\">" + QString::fromStdString(head).toHtmlEscaped()), -1) << request.id;
  }
  EXPECT_GT(total, 0);
  // The run without a shared prefix highlights nothing.
  const MeasuredRun& distinct = r.run("distinct");
  for (const auto& [id, n] : prefix_cached_tokens(distinct.result.metrics)) EXPECT_EQ(n, 0) << id;
}

TEST(LearnPlots, SpecTokensColourEveryTokenByItsOrigin) {
  offscreen_app();
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const Ran r = run(path, "8-speculative-decoding");
  const MeasuredRun& ngram = r.run("ngram");
  const SpecDecodeCounters& spec = ngram.result.summary.spec;
  ASSERT_GT(spec.num_drafts, 0);
  // The replayed trace counts what the engine counted: accepted drafts, and one correction per refusal.
  int64_t refused = 0;
  for (const WorkloadOutput& out : ngram.result.outputs) {
    for (const StreamedVerification& v : out.verifications) refused += v.verification.rejected;
  }
  const QString text = plain(spec_tokens_html(ngram, *r.model));
  if (spec.num_accepted_tokens > 0) {
    EXPECT_TRUE(text.contains(QString("accepted draft %1").arg(spec.num_accepted_tokens))) << text.toStdString();
  }
  if (refused > 0) {
    EXPECT_TRUE(text.contains(QString("refused draft %1").arg(refused))) << text.toStdString();
  }
  // The tokens shown, refused drafts aside, are the output's text.
  std::string streamed;
  for (const StreamedPiece& p : ngram.result.outputs.front().pieces) streamed += p.piece;
  EXPECT_EQ(streamed, ngram.result.outputs.front().text);
}

TEST(LearnPlots, KvPictureStatesTheFormulaInTheModelsNumbers) {
  offscreen_app();
  KvTokenPicture picture({30, 3, 9, 64, 23040});
  EXPECT_EQ(picture.formula(), "2 (K and V) × 30 layers × 3 KV heads × 64 values × 2 bytes = 23040 bytes for this token");
  // a sliding window: what the local layers keep at most
  EXPECT_EQ(KvTokenPicture({18, 1, 4, 256, 18432, 512, 15}).formula(),
            "2 (K and V) × 18 layers × 1 KV heads × 256 values × 2 bytes = 18432 bytes for this token; the 15 local "
            "layers keep at most 512 tokens (their sliding window)");
  picture.resize(picture.sizeHint());
  EXPECT_GT(distinct_colors(render(picture, "kv_token_picture")), 3);
}

TEST(LearnPlots, AttentionSweepDrawsTheSweepsRows) {
  offscreen_app();
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const Ran r = run(path, "5-flash-vs-naive");
  ExperimentPlot plot;
  plot.kind = "attention_sweep";
  std::unique_ptr<QWidget> widget(make_experiment_plot(plot, r.result, *r.model, nullptr));
  const QList<QCustomPlot*> plots = widget->findChildren<QCustomPlot*>();
  ASSERT_EQ(plots.size(), 2);  // time, scratch
  for (int i = 0; i < 2; ++i) {
    for (int g = 0; g < plots[i]->graphCount(); ++g) {
      const QCPGraph* graph = plots[i]->graph(g);
      const std::string impl = graph->name().toStdString();
      for (const AttentionBenchRow& row : r.result.attention_sweep) {
        if (row.phase != "prefill" || row.implementation != impl) continue;
        const auto point = graph->data()->findBegin(row.context, false);
        ASSERT_NE(point, graph->data()->constEnd());
        EXPECT_EQ(point->value, i == 0 ? row.seconds_mean : static_cast<double>(row.scratch_bytes)) << impl << " " << row.context;
      }
    }
  }
}

}  // namespace
}  // namespace inferscope::gui::test
