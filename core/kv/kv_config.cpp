#include "core/kv/kv_config.h"

#include <algorithm>

#include <stdexcept>
#include <string>

#include "core/kv/contiguous_kv_cache.h"
#include "core/kv/paged_kv_cache.h"

namespace inferscope {

size_t kv_budget_for_sequences(const KvGeometry& geometry, const KvConfig& config, int32_t sequences) {
  const size_t block = config.kind == KvKind::Paged ? static_cast<size_t>(std::max(1, config.block_size)) : 1;
  const size_t slots = (static_cast<size_t>(std::max(0, config.max_seq_len)) + block - 1) / block * block;
  return geometry.bytes_per_token() * slots * static_cast<size_t>(std::max(1, sequences));
}

std::unique_ptr<KvCache> make_kv_cache(const KvGeometry& geometry, const KvConfig& config) {
  if (config.kind == KvKind::Contiguous) {
    return std::make_unique<ContiguousKvCache>(geometry, config.max_seq_len, config.budget_bytes);
  }
  return std::make_unique<PagedKvCache>(geometry, config.block_size, config.budget_bytes, config.prefix_cache);
}

}  // namespace inferscope
