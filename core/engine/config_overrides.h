// Engine settings as JSON, the way demo scripts, experiments and session files write them: one key per
// row of the setting table (setting_table.h), e.g.
//   {"kv": "contiguous", "block_size": 16, "kv_budget_mib": 64, "context": 1024, "prefix_cache": true,
//    "attention": "naive", "quant": "q4", "spec": "ngram", "spec_k": "auto", "device": "cuda:0"}
#pragma once
#include <functional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/engine/engine_config.h"

namespace inferscope {

// Turns a path written in the JSON (a draft model) into one to open; empty: kept as written.
using PathResolver = std::function<std::string(const std::string&)>;

// `config` with the settings of `overrides` applied; throws std::runtime_error naming `where`, the key
// and the value for an unknown setting or a bad value.
EngineConfig apply_config_overrides(EngineConfig config, const nlohmann::json& overrides, const std::string& where,
                                    const PathResolver& resolve = {});

// Every setting as `config` has it (the KV budget in whole MiB), so that apply_config_overrides of the
// result over any config gives `config` back.
nlohmann::json config_overrides_of(const EngineConfig& config);

}  // namespace inferscope
