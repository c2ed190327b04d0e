// The Learn tab driven offscreen on stories260K, one experiment per test: it runs, its narration in
// the window is the experiment's text filled with the values it measured, those values are the
// metrics its runs recorded, every plot it asks for is drawn with the same numbers the narration
// quotes, and the report exports with them.
#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <algorithm>

#include <qcustomplot.h>

#include "core/learn/narration.h"
#include "gui/learn/learn_runner.h"
#include "gui/learn/learn_view.h"
#include "tests/gui/workbench_fixture.h"

namespace inferscope::gui::test {
namespace {

class LearnExperiment : public ::testing::TestWithParam<const char*> {};

// Every bar series in the charts under `chart`.
QList<QCPBars*> bars_in(QWidget& chart) {
  QList<QCPBars*> bars;
  for (QCustomPlot* p : chart.findChildren<QCustomPlot*>())
    for (int j = 0; j < p->plottableCount(); ++j)
      if (auto* b = qobject_cast<QCPBars*>(p->plottable(j))) bars << b;
  return bars;
}

TEST_P(LearnExperiment, NarratesTheNumbersItMeasured) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir sessions;
  auto w = open_window(sessions.path(), QString::fromStdString(path));
  ASSERT_TRUE(wait_for([&] { return w->bridge().has_engine() && !w->bridge().busy(); }));
  LearnView& learn = *w->learn();
  ASSERT_GE(learn.experiment_count(), 9);
  ASSERT_TRUE(learn.select_experiment(GetParam())) << GetParam();
  ASSERT_TRUE(learn.start()) << learn.status_text().toStdString();
  ASSERT_TRUE(wait_for([&] { return !learn.running(); }, 240000));
  const ExperimentResult* r = learn.result();
  ASSERT_NE(r, nullptr) << learn.status_text().toStdString();
  const Experiment& e = *learn.current();
  ASSERT_EQ(r->runs.size(), e.runs.size());

  // Each run's values are its own metrics.
  for (const MeasuredRun& run : r->runs) {
    int64_t prefill = 0, decode = 0;
    int32_t running = 0;
    for (const StepMetrics& st : run.result.metrics.steps) {
      prefill += st.prefill_tokens;
      decode += st.decode_tokens;
      running = std::max(running, st.num_requests_running);
    }
    const std::string p = run.name + ".";
    EXPECT_EQ(r->values.at(p + "prefill_tokens"), static_cast<double>(prefill)) << p;
    EXPECT_EQ(r->values.at(p + "decode_tokens"), static_cast<double>(decode)) << p;
    EXPECT_EQ(r->values.at(p + "max_concurrent_requests"), running) << p;
    EXPECT_EQ(r->values.at(p + "tokens_per_second"), run.result.summary.tokens_per_second) << p;
    EXPECT_EQ(r->values.at(p + "peak_filled_tokens"), static_cast<double>(run.peak_kv.filled_tokens)) << p;
    EXPECT_EQ(r->values.at(p + "requests_finished"), static_cast<double>(e.runs[&run - r->runs.data()].workload.requests.size())) << p;
    // Acceptance per draft position: the drafts whose token there was accepted, over all drafts.
    const SpecDecodeCounters& spec = run.result.summary.spec;
    for (int32_t i = 0; i < static_cast<int32_t>(r->values.at(p + "spec_k")); ++i) {
      const int64_t accepted = static_cast<size_t>(i) < spec.num_accepted_tokens_per_pos.size() ? spec.num_accepted_tokens_per_pos[i] : 0;
      EXPECT_EQ(r->values.at(p + "spec_decode.acceptance_at_" + std::to_string(i + 1)),
                spec.num_drafts > 0 ? static_cast<double>(accepted) / static_cast<double>(spec.num_drafts) : 0.0) << p << i;
    }
    EXPECT_EQ(r->values.count(p + "perplexity"), e.perplexity ? 1u : 0u) << p;
  }
  // The window shows the experiment's narration filled with exactly those values.
  const std::string shown = learn.narration_text().toStdString();
  ASSERT_EQ(r->narration.size(), e.narration.size());
  for (size_t i = 0; i < e.narration.size(); ++i) {
    EXPECT_EQ(r->narration[i], fill_narration(e.narration[i], r->values));
    EXPECT_NE(shown.find(r->narration[i]), std::string::npos) << "not shown: " << r->narration[i];
  }
  EXPECT_FALSE(r->conclusion.empty());
  EXPECT_NE(shown.find(r->conclusion), std::string::npos);
  ASSERT_EQ(learn.plot_widgets().size(), static_cast<qsizetype>(e.plots.size()));

  // The narration's figures are the charts' own data: each run's bar is the value the plot names, and
  // a speculating run's mean draft and verify times (the narration's) are the means of the chart's lines.
  int lines_checked = 0;
  for (size_t i = 0; i < e.plots.size(); ++i) {
    QWidget* chart = learn.plot_widgets()[static_cast<qsizetype>(i)];
    for (QCPBars* bar : e.plots[i].kind == "bars" ? bars_in(*chart) : QList<QCPBars*>()) {
      ASSERT_EQ(bar->dataCount(), 1);
      EXPECT_DOUBLE_EQ(bar->data()->at(0)->value, r->values.at(bar->name().toStdString() + "." + e.plots[i].value))
          << bar->name().toStdString();
    }
    for (QCustomPlot* p : chart->findChildren<QCustomPlot*>()) {
      for (int j = 0; j < p->graphCount(); ++j) {
        const QString name = p->graph(j)->name();
        if (name != "draft time" && name != "verify time") continue;
        double sum = 0;
        for (auto it = p->graph(j)->data()->constBegin(); it != p->graph(j)->data()->constEnd(); ++it) sum += it->value;
        const double mean = sum / p->graph(j)->dataCount();
        const std::string value = name == "draft time" ? "ngram.draft_seconds_per_pass" : "ngram.verify_seconds_per_pass";
        ++lines_checked;
        EXPECT_NEAR(mean, r->values.at(value), 1e-12) << value;
        EXPECT_NE(shown.find(format_value(mean, "time") + (name == "draft time" ? " to draft" : " to verify")), std::string::npos)
            << name.toStdString() << " " << format_value(mean, "time");
      }
    }
  }
  const auto verify_steps = r->values.find("ngram.verify_steps");
  if (verify_steps != r->values.end() && verify_steps->second > 0) {
    EXPECT_EQ(lines_checked, 2) << "draft and verify lines";
  }

  QTemporaryDir out;
  const QString report = learn.export_report(out.path());
  EXPECT_TRUE(QFileInfo::exists(report));
  for (size_t i = 0; i < e.plots.size(); ++i) {
    EXPECT_TRUE(QFileInfo::exists(QDir(out.path()).filePath(QString("%1-%2.png").arg(GetParam()).arg(i + 1))));
  }
}

// A finished result stays with its experiment: choosing another one shows that one's state (not run,
// nothing to export), and coming back shows the result again, exportable, with the model it ran on.
TEST(LearnView, ProgressSaysWhichRunOnlyWhenThereAreSeveral) {
  Experiment one;
  one.runs.resize(1);
  one.runs[0].name = "one";
  EXPECT_EQ(LearnRunner::progress_text(one, {.run = 0, .done = 0, .total = 0}), "starting…");
  EXPECT_EQ(LearnRunner::progress_text(one, {.run = 0, .done = 3, .total = 8}), "3 of 8 requests done");
  Experiment two = one;
  two.runs.resize(2);
  two.runs[1].name = "contiguous";
  EXPECT_EQ(LearnRunner::progress_text(two, {.run = 1, .done = 2, .total = 6}), "run 2 of 2 (contiguous): 2 of 6 requests done");
}

TEST(LearnView, EachExperimentKeepsItsFinishedResult) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  QTemporaryDir sessions;
  auto w = open_window(sessions.path(), QString::fromStdString(path));
  ASSERT_TRUE(wait_for([&] { return w->bridge().has_engine() && !w->bridge().busy(); }));
  LearnView& learn = *w->learn();
  ASSERT_TRUE(learn.select_experiment("2-kv-cache"));
  ASSERT_TRUE(learn.start()) << learn.status_text().toStdString();
  ASSERT_TRUE(wait_for([&] { return !learn.running(); }, 240000));
  ASSERT_NE(learn.result(), nullptr) << learn.status_text().toStdString();
  const std::string narration = learn.narration_text().toStdString();
  const qsizetype plots = learn.plot_widgets().size();

  ASSERT_TRUE(learn.select_experiment("9-operator-fusion"));
  EXPECT_EQ(learn.result(), nullptr);
  EXPECT_FALSE(learn.can_export());
  EXPECT_EQ(learn.status_text(), "not run yet");
  EXPECT_TRUE(learn.plot_widgets().isEmpty());

  ASSERT_TRUE(learn.select_experiment("2-kv-cache"));
  ASSERT_NE(learn.result(), nullptr);
  EXPECT_TRUE(learn.can_export());
  EXPECT_EQ(learn.narration_text().toStdString(), narration);
  EXPECT_EQ(learn.plot_widgets().size(), plots);
  EXPECT_TRUE(learn.status_text().startsWith("done on ")) << learn.status_text().toStdString();
  QTemporaryDir out;
  EXPECT_TRUE(QFileInfo::exists(learn.export_report(out.path())));
}

INSTANTIATE_TEST_SUITE_P(Shipped, LearnExperiment,
                         ::testing::Values("1-prefill-vs-decode", "2-kv-cache", "3-paged-vs-contiguous",
                                           "4-prefix-caching", "5-flash-vs-naive", "6-quantization",
                                           "7-continuous-vs-static", "8-speculative-decoding", "9-operator-fusion"));

}  // namespace
}  // namespace inferscope::gui::test
