#include "core/cli/engine_options.h"

namespace inferscope::cli {

EngineConfig engine_config(const RuntimeOptions& ro) {
  EngineConfig config;
  config.kv = KvConfig{ro.kv_kind, ro.block_size, ro.kv_budget_bytes, 0, ro.prefix_cache};
  config.kv_dtype = ro.kv_dtype;
  config.context_length = ro.context_length;
  config.threads = ro.threads;
  config.matmul = MatmulOptions{ro.activations};
  config.attention = ro.attention;
  config.quant = ro.quant;
  return config;
}

}  // namespace inferscope::cli
