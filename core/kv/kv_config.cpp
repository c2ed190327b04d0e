#include "core/kv/kv_config.h"

#include <stdexcept>
#include <string>

#include "core/kv/contiguous_kv_cache.h"
#include "core/kv/paged_kv_cache.h"

namespace inferscope {

std::string_view kv_kind_name(KvKind kind) { return kind == KvKind::Paged ? "paged" : "contiguous"; }

std::optional<KvKind> kv_kind_from_name(std::string_view name) {
  if (name == "paged") return KvKind::Paged;
  if (name == "contiguous") return KvKind::Contiguous;
  return std::nullopt;
}

std::unique_ptr<KvCache> make_kv_cache(const KvGeometry& geometry, const KvConfig& config) {
  if (config.kind == KvKind::Contiguous) {
    return std::make_unique<ContiguousKvCache>(geometry, config.max_seq_len, config.budget_bytes);
  }
  return std::make_unique<PagedKvCache>(geometry, config.block_size, config.budget_bytes, config.prefix_cache);
}

}  // namespace inferscope
