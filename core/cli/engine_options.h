// The engine configuration that the common model options (--kv, --block-size, --attention, ...) describe.
#pragma once
#include "core/engine/engine_config.h"
#include "core/engine/runtime.h"

namespace inferscope::cli {

EngineConfig engine_config(const RuntimeOptions& options);

}  // namespace inferscope::cli
