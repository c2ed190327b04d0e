// EngineCore under failure, on a dry run of a small synthetic model: a config whose weight switch
// fails leaves the engine exactly as it was; a throwing callback, schedule() or complete() ends
// only the requests it affects, and the core goes on serving.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/engine/engine_core.h"
#include "core/model/llama_model.h"
#include "tests/support/synthetic_model.h"

namespace inferscope {
namespace {

const LlamaModel& model() {
  static const std::unique_ptr<LlamaModel> m = test::load_synthetic_model({});
  return *m;
}

// What the callbacks delivered, per request (the core calls them on the caller's thread).
struct Recorder {
  std::map<RequestId, int32_t> tokens;
  std::map<RequestId, StopReason> finished;
  std::map<RequestId, int32_t> finish_calls;
  std::map<RequestId, std::string> errors;
  std::vector<std::string> configs;

  EngineCallbacks callbacks() {
    EngineCallbacks c;
    c.on_token = [this](RequestId id, std::string_view, TokenId token, const TokenTiming&) {
      if (token >= 0) ++tokens[id];
    };
    c.on_finished = [this](RequestId id, StopReason reason) {
      finished[id] = reason;
      ++finish_calls[id];
    };
    c.on_error = [this](RequestId id, const std::string& message) { errors[id] = message; };
    c.on_config = [this](bool applied, const std::string& note) {
      configs.push_back((applied ? "applied: " : "rejected: ") + note);
    };
    return c;
  }
};

EngineCoreOptions dry_run(std::function<void(std::string_view)> fault = {}) {
  EngineCoreOptions o;
  o.dry_run = StepCost{0.01, 0.001};
  o.test_fault = std::move(fault);
  return o;
}

EngineConfig small_config() {
  EngineConfig c;
  c.threads = 1;
  return c;
}

EngineRequest request(int32_t max_tokens) {
  EngineRequest r;
  r.prompt_tokens = {1, 5, 6, 7, 8};
  r.max_tokens = max_tokens;
  return r;
}

void run_until_idle(EngineCore& core) {
  for (int i = 0; i < 1000 && core.has_work(); ++i) core.step();
  ASSERT_FALSE(core.has_work());
}

TEST(EngineCoreConfig, FailedWeightSwitchLeavesTheEngineAsItWas) {
  Recorder got;
  EngineCore core(model(), small_config(), got.callbacks(), dry_run([](std::string_view where) {
                    if (where == "convert weights") throw std::runtime_error("out of memory");
                  }));
  for (RequestId id = 0; id < 3; ++id) core.add(id, request(20));
  for (int i = 0; i < 3; ++i) core.step();
  const EngineConfig before = core.config();
  const KvSnapshot kv_before = core.kv_snapshot();
  const int64_t preemptions_before = core.metrics().snapshot(core.now()).num_preemptions;
  ASSERT_EQ(kv_before.sequences.size(), 3u);

  // A new cache and new weights at once: the cache comes first, then the conversion fails.
  EngineConfig next = before;
  next.kv.kind = KvKind::Contiguous;
  next.scheduler.max_running = 1;
  next.quant = WeightQuant::Q8;
  core.apply_config(next);

  ASSERT_EQ(got.configs.size(), 1u);
  EXPECT_EQ(got.configs[0], "rejected: config rejected: out of memory");
  EXPECT_EQ(core.config().kv.kind, KvKind::Paged);
  EXPECT_EQ(core.config().kv.budget_bytes, before.kv.budget_bytes);
  EXPECT_EQ(core.config().scheduler.max_running, 0);
  EXPECT_EQ(core.config().quant, WeightQuant::Native);
  const KvSnapshot kv_after = core.kv_snapshot();
  EXPECT_EQ(kv_after.kind, "paged");
  EXPECT_EQ(kv_after.block_size, kv_before.block_size);
  EXPECT_EQ(kv_after.blocks.size(), kv_before.blocks.size());
  ASSERT_EQ(kv_after.sequences.size(), kv_before.sequences.size());
  for (size_t i = 0; i < kv_before.sequences.size(); ++i) {
    EXPECT_EQ(kv_after.sequences[i].id, kv_before.sequences[i].id);
    EXPECT_EQ(kv_after.sequences[i].block_table, kv_before.sequences[i].block_table);
    EXPECT_EQ(kv_after.sequences[i].tokens, kv_before.sequences[i].tokens);
  }
  const EngineMetricsSnapshot m = core.metrics().snapshot(core.now());
  EXPECT_EQ(m.num_preemptions, preemptions_before);
  EXPECT_EQ(m.weights_quant, "native");

  // It keeps serving: the three run to their length on the old cache, and a new one after them.
  core.add(3, request(4));
  run_until_idle(core);
  for (RequestId id = 0; id < 4; ++id) {
    EXPECT_EQ(got.finished[id], StopReason::Length) << id;
    EXPECT_EQ(got.tokens[id], id < 3 ? 20 : 4) << id;
  }
  EXPECT_TRUE(got.errors.empty());
}

TEST(EngineCoreConfig, NewCacheAndNewWeightsAtOnceShareOneSwap) {
  Recorder got;
  EngineCore core(model(), small_config(), got.callbacks(), dry_run());
  for (RequestId id = 0; id < 3; ++id) core.add(id, request(20));
  for (int i = 0; i < 3; ++i) core.step();
  EngineConfig next = core.config();
  next.kv.kind = KvKind::Contiguous;
  next.quant = WeightQuant::Q8;
  core.apply_config(next);

  ASSERT_EQ(got.configs.size(), 1u);
  EXPECT_NE(got.configs[0].find("applied: KV contiguous"), std::string::npos) << got.configs[0];
  EXPECT_NE(got.configs[0].find("new KV cache; 3 running requests preempted"), std::string::npos) << got.configs[0];
  EXPECT_NE(got.configs[0].find("weights now q8"), std::string::npos) << got.configs[0];
  EXPECT_NE(got.configs[0].find("3 running requests recomputed with the new weights"), std::string::npos)
      << got.configs[0];
  EXPECT_EQ(core.config().kv.kind, KvKind::Contiguous);
  EXPECT_EQ(core.config().quant, WeightQuant::Q8);
  EXPECT_EQ(core.kv_snapshot().kind, "contiguous");
  const EngineMetricsSnapshot m = core.metrics().snapshot(core.now());
  EXPECT_EQ(m.num_preemptions, 3);
  EXPECT_EQ(m.weights_quant, "q8");
  run_until_idle(core);
  for (RequestId id = 0; id < 3; ++id) EXPECT_EQ(got.tokens[id], 20) << id;
}

}  // namespace
}  // namespace inferscope
