// config_overrides_of is the inverse of apply_config_overrides: every toggle it writes reads back to
// the same configuration (what the workbench keeps between runs).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/engine/config_overrides.h"

namespace inferscope {
namespace {

TEST(ConfigOverrides, EveryToggleRoundTrips) {
  EngineConfig c;
  c.kv.kind = KvKind::Contiguous;
  c.kv.block_size = 32;
  c.kv.budget_bytes = size_t{96} << 20;
  c.kv.prefix_cache = false;
  c.context_length = 1024;
  c.attention = "naive";
  c.kv_dtype = DType::Q8_0;
  c.quant = WeightQuant::Q4;
  c.scheduler.policy = SchedulerPolicy::Static;
  c.scheduler.max_running = 3;
  c.scheduler.max_batch_tokens = 128;
  c.forward.matmul.fuse = false;
  c.threads = 2;
  c.spec.mode = SpecMode::Ngram;
  c.spec.k = 6;
  c.spec.ngram_min = 1;
  c.spec.ngram_max = 5;
  c.spec.draft_model = "/models/draft.gguf";
  c.spec.draft_quant = WeightQuant::Q8;
  c.spec.draft_layers = 3;
  c.spec.draft_p_min = 0.25f;
  c.device = ComputeDevice{true, 1};

  const nlohmann::json overrides = config_overrides_of(c);
  const EngineConfig back = apply_config_overrides(EngineConfig{}, overrides, "test");
  EXPECT_EQ(config_overrides_of(back), overrides) << overrides.dump();
  EXPECT_EQ(back.kv.kind, KvKind::Contiguous);
  EXPECT_EQ(back.kv.budget_bytes, size_t{96} << 20);
  EXPECT_EQ(back.kv_dtype, DType::Q8_0);
  EXPECT_EQ(back.quant, WeightQuant::Q4);
  EXPECT_EQ(back.spec.mode, SpecMode::Ngram);
  EXPECT_EQ(back.spec.draft_model, "/models/draft.gguf");
  EXPECT_FLOAT_EQ(back.spec.draft_p_min, 0.25f);
  EXPECT_FALSE(back.forward.matmul.fuse);
  EXPECT_EQ(back.device, (ComputeDevice{true, 1}));
}

TEST(ConfigOverrides, ABadDeviceIsRefusedByName) {
  try {
    apply_config_overrides(EngineConfig{}, {{"device", "gpu0"}}, "test");
    FAIL() << "device gpu0 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "test: config: 'device' must be \"cpu\", \"cuda\" or \"cuda:N\", not \"gpu0\"");
  }
}

// spec_k: "auto" (the default, written so) or a number of drafts, also as text (settings files keep
// text only); anything else is refused by name.
TEST(ConfigOverrides, SpecKIsAutoOrANumber) {
  EXPECT_EQ(config_overrides_of(EngineConfig{})["spec_k"], "auto");
  EXPECT_EQ(apply_config_overrides(EngineConfig{}, {{"spec_k", 6}}, "test").spec.k, 6);
  EXPECT_EQ(apply_config_overrides(EngineConfig{}, {{"spec_k", "6"}}, "test").spec.k, 6);
  EngineConfig fixed;
  fixed.spec.k = 6;
  EXPECT_EQ(apply_config_overrides(fixed, {{"spec_k", "auto"}}, "test").spec.k, SpecConfig::kAutoK);
  for (const nlohmann::json& bad : {nlohmann::json("six"), nlohmann::json("-1"), nlohmann::json(2.5)}) {
    try {
      apply_config_overrides(EngineConfig{}, {{"spec_k", bad}}, "test");
      ADD_FAILURE() << "spec_k " << bad.dump() << " was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("'spec_k'"), std::string::npos) << e.what();
    }
  }
}

TEST(ConfigOverrides, TheDefaultsReadBackAsTheDefaults) {
  const nlohmann::json defaults = config_overrides_of(EngineConfig{});
  EXPECT_EQ(config_overrides_of(apply_config_overrides(EngineConfig{}, defaults, "test")), defaults);
}

}  // namespace
}  // namespace inferscope
