// Engine toggles as JSON, the way demo scripts and experiments write them:
//   {"kv": "contiguous", "block_size": 16, "kv_budget_mib": 64, "context": 1024, "prefix_cache": true,
//    "attention": "naive", "kv_dtype": "q8", "quant": "q4", "scheduler": "static", "max_running": 4,
//    "max_batch_tokens": 256, "threads": 2, "fuse": false, "device": "cuda:0", "spec": "ngram", "spec_k": "auto" (or 1..16), "ngram_min": 2,
//    "ngram_max": 8, "draft_model": "models/x.gguf", "draft_quant": "q4", "draft_layers": 2,
//    "draft_p_min": 0.1}
#pragma once
#include <functional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/engine/engine_config.h"

namespace inferscope {

// Turns a path written in the JSON (a draft model) into one to open; empty: kept as written.
using PathResolver = std::function<std::string(const std::string&)>;

// `config` with the toggles of `overrides` applied; throws std::runtime_error naming `where`, the key
// and the value for an unknown toggle or a bad value.
EngineConfig apply_config_overrides(EngineConfig config, const nlohmann::json& overrides, const std::string& where,
                                    const PathResolver& resolve = {});

// Every toggle above as `config` has it (the KV budget in whole MiB), so that apply_config_overrides of the
// result over any config gives `config` back: what the workbench keeps between runs.
nlohmann::json config_overrides_of(const EngineConfig& config);

}  // namespace inferscope
