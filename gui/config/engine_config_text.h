// The engine configuration in words and in JSON, for the status line, reply stats and exports.
#pragma once
#include <QString>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/engine_config.h"

namespace inferscope::gui {

// "paged 16 · 128 MiB · prefix cache · flash · KV f16 · continuous · spec ngram k=4 (n 2..4)".
QString engine_config_summary(const EngineConfig& config);
// Every setting by its export name, in the config panel's order (KV cache, compute, scheduler,
// threads, speculation as one object): the fields of engine_config_json.
std::vector<std::pair<std::string, nlohmann::json>> engine_config_settings(const EngineConfig& config);
nlohmann::json engine_config_json(const EngineConfig& config);

}  // namespace inferscope::gui
