// Which KV cache manager to build, and with what memory: the "KV mode" toggle.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "core/common/setting_row.h"
#include "core/kv/kv_cache.h"

namespace inferscope {

enum class KvKind { Paged, Contiguous };
// Inline: the readers of config files (experiments, the fuzz targets) use the names without the caches.
inline std::string_view kv_kind_name(KvKind kind) { return kind == KvKind::Paged ? "paged" : "contiguous"; }
inline std::optional<KvKind> kv_kind_from_name(std::string_view name) {
  if (name == "paged") return KvKind::Paged;
  if (name == "contiguous") return KvKind::Contiguous;
  return std::nullopt;
}

struct KvConfig {
  KvKind kind = KvKind::Paged;
  int32_t block_size = 16;   // paged: tokens per block (8, 16 or 32)
  size_t budget_bytes = 0;   // memory for K/V of all sequences
  int32_t max_seq_len = 0;   // contiguous: tokens reserved per sequence (the model's context by default)
  bool prefix_cache = true;  // paged: reuse full blocks across sequences with the same prefix
};

// The settings above, in the Config panel's order (the engine's table lifts them: core/common/setting_row.h).
std::vector<SettingRow<KvConfig>> kv_config_settings();

// Room for `sequences` whole sequences of config.max_seq_len tokens (rounded up to whole blocks when
// paged), in bytes: the default budget when none is given.
size_t kv_budget_for_sequences(const KvGeometry& geometry, const KvConfig& config, int32_t sequences);

// Throws std::invalid_argument naming the bad setting (block size, a budget below one sequence...).
std::unique_ptr<KvCache> make_kv_cache(const KvGeometry& geometry, const KvConfig& config);

}  // namespace inferscope
