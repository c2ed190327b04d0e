#include "core/kv/kv_cache.h"

#include <stdexcept>
#include <string>

#include "core/kv/kv_dtype.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {

size_t KvGeometry::row_bytes() const { return kv_row_bytes(dtype, head_dim); }

size_t KvGeometry::bytes_per_token() const {
  return 2 * row_bytes() * static_cast<size_t>(n_layers) * static_cast<size_t>(n_kv_heads);
}

const uint8_t* KvView::key(int32_t t, int32_t head, int32_t head_dim) const {
  return k_base + static_cast<size_t>(block_table[t / block_size]) * block_stride + head * head_stride +
         static_cast<size_t>(t % block_size) * row_bytes(dtype, head_dim);
}

const uint8_t* KvView::value(int32_t t, int32_t head, int32_t head_dim) const {
  return v_base + static_cast<size_t>(block_table[t / block_size]) * block_stride + head * head_stride +
         static_cast<size_t>(t % block_size) * row_bytes(dtype, head_dim);
}

double KvStats::kv_cache_usage_perc() const {
  return budget_bytes == 0 ? 0.0 : static_cast<double>(used_bytes) / static_cast<double>(budget_bytes);
}

double KvStats::kv_internal_fragmentation_perc() const {
  if (!paged || allocated_tokens == 0) return 0.0;  // contiguous: its waste is reserved-unused
  return static_cast<double>(allocated_tokens - filled_tokens) / static_cast<double>(allocated_tokens);
}

double KvStats::kv_reserved_unused_perc() const {
  if (paged || allocated_tokens == 0) return 0.0;  // paged reserves nothing ahead
  return static_cast<double>(allocated_tokens - filled_tokens) / static_cast<double>(allocated_tokens);
}

KvCache::KvCache(KvGeometry geometry) : geometry_(geometry) {
  if (geometry_.n_layers <= 0 || geometry_.n_kv_heads <= 0) {
    throw std::invalid_argument("KV cache: layers (" + std::to_string(geometry_.n_layers) + ") and KV heads (" +
                                std::to_string(geometry_.n_kv_heads) + ") must be positive");
  }
  geometry_.row_bytes();  // throws for a dtype or head_dim the cache cannot store
}

void KvCache::check_layer(int32_t layer) const {
  if (layer < 0 || layer >= geometry_.n_layers) {
    throw std::out_of_range(name() + " KV cache: no layer " + std::to_string(layer) + " (the model has " +
                            std::to_string(geometry_.n_layers) + ")");
  }
}

void KvCache::write_row(uint8_t* dst, const float* src) const {
  quantize_row(geometry_.dtype, src, dst, geometry_.head_dim);
}

}  // namespace inferscope
