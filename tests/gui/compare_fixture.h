// Shared by the Compare A/B tab's tests: a window on stories260K with its Compare view, workload files
// of pseudo-random prompts, and a comparison run and waited for.
#pragma once
#include <QFile>
#include <QSignalSpy>

#include <nlohmann/json.hpp>

#include "gui/compare/compare_view.h"
#include "tests/gui/workbench_fixture.h"

namespace inferscope::gui::test {

// A workload file in `dir` of `n` requests (12 pseudo-random prompt ids, `output_tokens` each),
// `spacing_s` apart.
inline QString write_workload(const QTemporaryDir& dir, int n, int output_tokens = 24, double spacing_s = 0.01) {
  nlohmann::json requests = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    requests.push_back({{"arrival_s", spacing_s * i}, {"prompt_tokens", 12}, {"output_tokens", output_tokens}});
  }
  const QString path = dir.filePath("tiny.json");
  QFile file(path);
  EXPECT_TRUE(file.open(QIODevice::WriteOnly));
  file.write(QByteArray::fromStdString(nlohmann::json{{"requests", requests}}.dump()));
  return path;
}

// Runs the view's comparison and waits for it to end.
inline bool run_comparison(CompareView& view, int ms = 60000) {
  QSignalSpy ended(&view, &CompareView::run_ended);
  if (!view.start()) return false;
  return wait_for([&] { return ended.count() > 0; }, ms);
}

// A window with its engine running on stories260K, and its Compare view.
struct CompareWindow : ::testing::Test {
  void SetUp() override {
    const std::string model = ::inferscope::test::shared_model_path("stories260K.gguf");
    ASSERT_TRUE(::inferscope::test::model_file_exists(model));
    w = open_window(dir.path(), QString::fromStdString(model));
    ASSERT_TRUE(wait_for_engine(*w));
    view = w->compare();
    view->set_runs_per_side(1);  // each test that needs the spread asks for more runs
  }
  QTemporaryDir dir;
  std::unique_ptr<MainWindow> w;
  CompareView* view = nullptr;
};

}  // namespace inferscope::gui::test
