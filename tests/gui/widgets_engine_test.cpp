// The widgets on a real Engine (stories260K): two requests streaming at once; the dashboard's series
// gain points from metrics_snapshot() and the block view shows both sequences' blocks from
// kv_snapshot(), with their tokens' text in the hover.
#include <gtest/gtest.h>

#include <QTest>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <qcustomplot.h>

#include "core/engine/engine.h"
#include "core/model/llama_model.h"
#include "gui/blocks/block_grid.h"
#include "gui/blocks/block_table_view.h"
#include "gui/blocks/block_tooltip.h"
#include "gui/dashboard/metrics_dashboard.h"
#include "tests/gui/offscreen_app.h"
#include "tests/support/test_models.h"

namespace inferscope::gui::test {
namespace {

int points(QCustomPlot* plot, const QString& name) {
  for (int i = 0; i < plot->plottableCount(); ++i)
    if (plot->plottable(i)->name() == name) return plot->plottable(i)->interface1D()->dataCount();
  return -1;
}

TEST(WidgetsOnEngine, TwoRequestsShowInTheDashboardAndTheBlockTable) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  offscreen_app();
  const auto model = LlamaModel::load(path);
  std::mutex mu;
  std::map<RequestId, int> tokens;
  EngineCallbacks callbacks;
  callbacks.on_token = [&](RequestId id, std::string_view, TokenId token, const TokenTiming&) {
    bool both = false;
    {
      std::lock_guard lock(mu);
      tokens[id] += token >= 0;
      both = tokens.size() == 2 && tokens.begin()->second >= 3 && tokens.rbegin()->second >= 3;
    }
    // Once both stream, hold the engine back so the test catches them running: the 260K model
    // would otherwise finish both (even on a loaded machine, before the GUI thread looks).
    if (both) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  EngineConfig config;
  config.threads = 2;
  config.kv.block_size = 8;
  Engine engine(*model, config, callbacks);

  MetricsDashboard dash;
  dash.resize(1400, 600);
  BlockTableView view;
  view.resize(900, 400);
  const TokenDecoder decode = [&](std::span<const int32_t> ids) {
    return QString::fromStdString(model->tokenizer().decode(std::vector<TokenId>(ids.begin(), ids.end())));
  };
  view.set_token_decoder(decode);
  dash.update_from(engine.metrics_snapshot());
  EXPECT_EQ(points(dash.plot("kv_usage"), "KV usage"), 0);

  EngineRequest a, b;
  a.prompt = "Once upon a time, there was a little girl named Lily.";
  b.prompt = "The little dog";
  a.max_tokens = b.max_tokens = 200;  // long enough to be caught while both run
  a.sampling.ignore_eos = b.sampling.ignore_eos = true;  // neither ends early
  const RequestId ida = engine.submit(a), idb = engine.submit(b);
  auto both_streaming = [&] {
    std::lock_guard lock(mu);
    return tokens[ida] >= 3 && tokens[idb] >= 3;
  };
  ASSERT_TRUE(QTest::qWaitFor(both_streaming, 60000));
  const KvSnapshot kv = *engine.kv_snapshot();
  const EngineMetricsSnapshot metrics = engine.metrics_snapshot();
  engine.cancel(ida);
  engine.cancel(idb);

  dash.update_from(metrics);
  view.set_sequence_owners({{ida, {"a", "chat A"}}, {idb, {"b", "chat B"}}});
  view.update_from(kv);
  EXPECT_EQ(points(dash.plot("kv_usage"), "KV usage"), static_cast<int>(metrics.steps.size()));
  EXPECT_GE(metrics.steps.size(), 3u);
  EXPECT_EQ(points(dash.plot("ttft"), "TTFT"), 2);
  EXPECT_EQ(points(dash.plot("tokens_per_step"), "prefill tokens"), static_cast<int>(metrics.steps.size()));
  EXPECT_GT(points(dash.plot("decode_tokens_per_second"), "engine decode tok/s"), 0);
  // A step of a real model counts its cost: it is a dot on the roofline.
  EXPECT_EQ(points(dash.plot("roofline"), "prefill steps") + points(dash.plot("roofline"), "decode-only steps"),
            static_cast<int>(metrics.steps.size()));

  // Both sequences own blocks in the grid, each block under its own cell, with its tokens' text.
  BlockGrid* grid = view.grid();
  ASSERT_EQ(kv.kind, "paged");
  for (RequestId id : {ida, idb}) {
    view.select_sequence(id);
    ASSERT_EQ(view.selected_sequence(), id);
    const auto table = view.selected_table();
    ASSERT_FALSE(table.empty());
    for (const auto& [logical, physical] : table) {
      EXPECT_EQ(grid->block_at(grid->block_rect(physical).center()), physical);
      const auto& owners = kv.blocks[physical].owners;
      EXPECT_NE(std::find(owners.begin(), owners.end(), id), owners.end());
    }
    const QString tip = block_tooltip(kv, table.front().second, {}, decode);
    EXPECT_TRUE(tip.contains("text: “")) << tip.toStdString();
  }
  view.select_sequence(ida);
  EXPECT_TRUE(block_tooltip(kv, view.selected_table().front().second, {}, decode).contains("Once upon"));
  render(view, "engine_block_table");
  render(dash, "engine_dashboard");
}

}  // namespace
}  // namespace inferscope::gui::test
