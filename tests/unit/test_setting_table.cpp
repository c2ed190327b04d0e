// The setting table is the one description of every engine setting: each row reads back what it
// writes, refuses a bad value by saying why, and drives describe_change, the change lists and the
// JSON configs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "core/engine/config_overrides.h"
#include "core/engine/setting_table.h"

namespace inferscope {
namespace {

// A config where every setting holds something other than its default.
EngineConfig unusual_config() {
  EngineConfig c;
  c.kv.kind = KvKind::Contiguous;
  c.kv.block_size = 8;
  c.kv.budget_bytes = size_t{48} << 20;
  c.kv.prefix_cache = false;
  c.context_length = 512;
  c.kv_dtype = DType::Q8_0;
  c.attention = "naive";
  c.forward.matmul.fuse = false;
  c.forward.matmul.activations = ActivationPrecision::Q8;
  c.quant = WeightQuant::Q6_K;
  c.threads = 3;
  c.device = ComputeDevice{true, 2};
  c.scheduler.policy = SchedulerPolicy::Static;
  c.scheduler.max_running = 5;
  c.scheduler.max_batch_tokens = 96;
  c.spec.mode = SpecMode::EarlyExit;
  c.spec.k = 7;
  c.spec.ngram_min = 3;
  c.spec.ngram_max = 9;
  c.spec.draft_model = "/m/draft.gguf";
  c.spec.draft_quant = WeightQuant::Q4_1;
  c.spec.draft_layers = 4;
  c.spec.draft_p_min = 0.3f;
  return c;
}

TEST(SettingTable, EveryRowIsDescribedAndNamedOnce) {
  std::set<std::string> keys, flags, names;
  for (const EngineSetting& s : engine_settings()) {
    SCOPED_TRACE(s.key);
    EXPECT_TRUE(keys.insert(s.key).second);
    EXPECT_TRUE(flags.insert(s.flag).second);
    EXPECT_TRUE(names.insert(s.name).second);
    EXPECT_EQ(s.flag.rfind("--", 0), 0u);
    for (const std::string* text : {&s.help, &s.switch_cost, &s.section, &s.label, &s.explanation}) {
      EXPECT_FALSE(text->empty());
    }
    EXPECT_TRUE(s.get && s.set);
    EXPECT_EQ(s.kind == SettingKind::Choice, !s.choices.empty());
    EXPECT_EQ(s.kind == SettingKind::Switch, !s.switch_text.empty());
    EXPECT_EQ(static_cast<bool>(s.applies), !s.applies_when.empty());
    EXPECT_EQ(find_setting(s.key), &s);
  }
  EXPECT_EQ(find_setting("speed"), nullptr);
}

// Each config declares its rows beside its fields; the engine's table holds every one of them.
TEST(SettingTable, EachConfigsOwnRowsAreInTheTable) {
  std::vector<std::string> own;
  for (const auto& r : kv_config_settings()) own.push_back(r.key);
  for (const auto& r : forward_option_settings()) own.push_back(r.key);
  for (const auto& r : scheduler_settings()) own.push_back(r.key);
  for (const auto& r : spec_settings()) own.push_back(r.key);
  for (const std::string& key : own) EXPECT_NE(find_setting(key), nullptr) << key;
}

// A part's rows, lifted onto the whole, read, write, apply and summarise through the part.
TEST(SettingRow, APartsRowsActOnThePartOfTheWhole) {
  struct Part {
    int32_t n = 1;
    bool on = false;
  };
  struct Whole {
    int32_t other = 0;
    Part part;
  };
  using Row = SettingRow<Part>;
  std::vector<Row> rows = {
      Row::integer({.key = "n", .lowest_means = "none", .applies = [](const Part& p) { return p.on; },
                    .applies_when = "--on", .summary = [](const Part& p) { return "n" + std::to_string(p.n); }},
                   0, 9, [](const Part& p) { return int64_t{p.n}; },
                   [](Part& p, int64_t v) { p.n = static_cast<int32_t>(v); }),
      Row::on_off({.key = "on", .switch_text = "on"}, [](const Part& p) { return p.on; },
                  [](Part& p, bool v) { p.on = v; }),
  };
  const std::vector<SettingRow<Whole>> lifted = settings_of_part(std::move(rows), &Whole::part);
  ASSERT_EQ(lifted.size(), 2u);
  Whole w;
  EXPECT_EQ(lifted[0].get(w), "1");
  EXPECT_FALSE(lifted[0].applies_to(w));
  lifted[1].set(w, "on");
  EXPECT_TRUE(w.part.on);
  EXPECT_TRUE(lifted[0].applies_to(w));
  lifted[0].set(w, "none");
  EXPECT_EQ(w.part.n, 0);
  lifted[0].set(w, "7");
  EXPECT_EQ(w.part.n, 7);
  EXPECT_EQ(w.other, 0);
  EXPECT_EQ(lifted[0].summary(w), "n7");
  EXPECT_FALSE(lifted[1].summary) << "a row without a summary stays without one";
  EXPECT_FALSE(lifted[1].applies) << "a row that always applies stays so";
  EXPECT_THROW(lifted[0].set(w, "10"), SettingError);
  EXPECT_EQ(lifted[0].lowest_means, "none");
  EXPECT_EQ(lifted[0].applies_when, "--on");
}

TEST(SettingTable, EveryRowReadsBackWhatItWrites) {
  const EngineConfig unusual = unusual_config();
  for (const EngineSetting& s : engine_settings()) {
    SCOPED_TRACE(s.key);
    EngineConfig c;
    const std::string default_text = s.get(c);
    s.set(c, s.get(unusual));
    EXPECT_EQ(s.get(c), s.get(unusual));
    EXPECT_NE(s.get(c), default_text) << "the unusual config should change every setting";
    s.set(c, default_text);
    EXPECT_EQ(s.get(c), default_text);
  }
  // Every choice of a choice setting is one it takes.
  for (const EngineSetting& s : engine_settings()) {
    for (const std::string& choice : s.choices) {
      EngineConfig c;
      s.set(c, choice);
      EXPECT_EQ(s.get(c), choice) << s.key;
    }
  }
}

TEST(SettingTable, ABadValueIsRefusedWithTheReason) {
  const auto refusal = [](const char* key, const std::string& text) -> std::string {
    EngineConfig c;
    try {
      find_setting(key)->set(c, text);
    } catch (const SettingError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_EQ(refusal("kv_dtype", "f8"), "is not one of f32, f16, q8");
  EXPECT_EQ(refusal("block_size", "12"), "is not one of 8, 16, 32");
  EXPECT_EQ(refusal("max_running", "many"), "is not an integer");
  EXPECT_EQ(refusal("max_running", "4097"), "is out of range (0..4096)");
  EXPECT_EQ(refusal("spec_k", "17"), "is out of range (1..16)");
  EXPECT_EQ(refusal("spec_k", "0"), "is out of range (1..16)") << "0 is not taken for auto";
  EXPECT_EQ(refusal("draft_p_min", "1.5"), "is out of range (0.000..1.000)");
  EXPECT_EQ(refusal("draft_p_min", "high"), "is not a number");
  EXPECT_EQ(refusal("fuse", "maybe"), "is not on or off");
  EXPECT_EQ(refusal("device", "tpu"), "is not a device (cpu, cuda or cuda:N)");
  EXPECT_EQ(refusal("draft_quant", "q6_k"), "is not one of q4, q4_1, q8");
  // The word for a lowest value stands for it.
  EngineConfig c;
  find_setting("spec_k")->set(c, "auto");
  EXPECT_TRUE(c.spec.auto_k());
  find_setting("max_running")->set(c, "no limit");
  EXPECT_EQ(c.scheduler.max_running, 0);
  find_setting("draft_p_min")->set(c, "off");
  EXPECT_EQ(c.spec.draft_p_min, 0.0f);
  find_setting("fuse")->set(c, "false");  // as JSON and earlier settings files wrote it
  EXPECT_FALSE(c.forward.matmul.fuse);
}

TEST(SettingTable, ChangesAreListedAndDescribedByName) {
  EngineConfig a, b;
  EXPECT_TRUE(changed_settings(a, b).empty());
  EXPECT_EQ(describe_change(a, b), "no change");
  b.kv.kind = KvKind::Contiguous;
  b.kv.budget_bytes = size_t{64} << 20;
  b.scheduler.max_running = 0;
  b.forward.matmul.fuse = false;
  EXPECT_EQ(describe_change(a, b), "KV contiguous, KV budget 64 MiB, operator fusion off");
  b.kv.block_size = 32;
  // The block size means nothing to a contiguous cache: listed as a change, not as a difference of both.
  ASSERT_EQ(changed_settings(a, b).size(), 4u);
  std::vector<std::string> both;
  for (const EngineSetting* s : changed_settings(a, b, true)) both.push_back(s->key);
  EXPECT_EQ(both, (std::vector<std::string>{"kv", "kv_budget_mib", "fuse"}));
  a.scheduler.max_running = 4;
  EXPECT_EQ(setting_text(*find_setting("max_running"), b), "max running no limit");
  EXPECT_EQ(setting_text(*find_setting("max_running"), a), "max running 4");
}

TEST(SettingTable, ASummaryNamesWhatMattersInTableOrder) {
  EngineConfig c;
  c.kv.budget_bytes = size_t{64} << 20;
  EXPECT_EQ(config_summary(c), "paged 16 · 64 MiB · prefix cache · KV f16 · flash · continuous");
  c.kv.kind = KvKind::Contiguous;
  c.forward.matmul.fuse = false;
  c.quant = WeightQuant::Q8;
  c.spec.mode = SpecMode::Ngram;
  EXPECT_EQ(config_summary(c), "contiguous · 64 MiB · KV f16 · flash · unfused · weights q8 · continuous · " + describe_spec(c.spec))
      << "a contiguous cache has no prefix cache to name";
}

TEST(SettingTable, TheSettingsFixedAtBuildAreNamed) {
  EXPECT_EQ(build_setting_names(), "operator fusion, activations and threads");
}

// config_overrides_of is the inverse of apply_config_overrides: every setting it writes reads back to
// the same configuration.
TEST(ConfigOverrides, EverySettingRoundTrips) {
  const EngineConfig c = unusual_config();
  const nlohmann::json overrides = config_overrides_of(c);
  const EngineConfig back = apply_config_overrides(EngineConfig{}, overrides, "test");
  EXPECT_EQ(config_overrides_of(back), overrides) << overrides.dump();
  EXPECT_TRUE(changed_settings(c, back).empty()) << describe_change(c, back);
  EXPECT_EQ(overrides["kv_budget_mib"], 48);
  EXPECT_EQ(overrides["prefix_cache"], false);
  EXPECT_EQ(overrides["block_size"], 8);
  EXPECT_EQ(overrides["draft_p_min"], 0.3);
}

TEST(ConfigOverrides, ABadDeviceIsRefusedByName) {
  try {
    apply_config_overrides(EngineConfig{}, {{"device", "gpu0"}}, "test");
    FAIL() << "device gpu0 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "test: config: 'device': \"gpu0\" is not a device (cpu, cuda or cuda:N)");
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
