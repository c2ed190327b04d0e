// The engine configuration in a few words, for the window title, reply stats and Compare's labels.
// (Its JSON, for exports, is config_overrides_of.)
#pragma once
#include <QString>

#include "core/engine/engine_config.h"

namespace inferscope::gui {

// "paged 16 · 128 MiB · prefix cache · flash · KV f16 · continuous · spec ngram k=4 (n 2..4)".
QString engine_config_summary(const EngineConfig& config);

}  // namespace inferscope::gui
