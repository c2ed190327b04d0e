// Every engine setting, declared once, beside its field: each config struct lists its own rows
// (core/common/setting_row.h), and engine_config_settings() lifts them onto EngineConfig. The
// command line, JSON configs, the workbench's stored settings, the session files, describe_change,
// the Config panel and Compare's editors all walk this table: a new setting is its field and row in
// its config's file pair, plus its effect in the engine.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/engine/engine_config.h"

namespace inferscope {

// Every setting, in the Config panel's order.
const std::vector<EngineSetting>& engine_settings();
// The setting with `key`; nullptr when there is none.
const EngineSetting* find_setting(std::string_view key);

// The settings whose text differs between `a` and `b`, in table order. `both_apply`: only those that
// mean something in both.
std::vector<const EngineSetting*> changed_settings(const EngineConfig& a, const EngineConfig& b, bool both_apply = false);
// "NAME VALUE" for `config`: "KV dtype q8", "KV budget 64 MiB".
std::string setting_text(const EngineSetting& setting, const EngineConfig& config);
// The settings fixed when an engine is built ("threads, operator fusion and activations").
std::string build_setting_names();
// The config in a few words, for window titles, reply stats and Compare's labels:
// "paged 16 · 128 MiB · prefix cache · KV f16 · flash · weights q8 · continuous".
std::string config_summary(const EngineConfig& config);

}  // namespace inferscope
