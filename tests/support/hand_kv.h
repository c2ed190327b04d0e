// K and V storage built by hand for attention tests, laid out as a KvView reads it (kv_cache.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "core/attention/attention.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {

// K and V storage laid out as paged_kv_cache.h describes: per physical block, per KV head,
// block_size rows. The block table is a random choice of physical blocks in random order, among as
// many spare blocks filled with NaN (read one by mistake and the output shows it). block_size 0:
// one block as large as the context (the contiguous layout).
class HandKv {
 public:
  HandKv(const AttentionShape& shape, DType dtype, int32_t block_size, int32_t ctx, const std::vector<float>& k,
         const std::vector<float>& v, std::mt19937& rng)
      : dtype_(dtype), length_(ctx), block_size_(block_size > 0 ? block_size : std::max(ctx, 1)) {
    const size_t row = row_bytes(dtype, shape.head_dim), hd = shape.head_dim;
    head_stride_ = block_size_ * row;
    block_stride_ = shape.n_kv_heads * head_stride_;
    const int32_t n_blocks = (ctx + block_size_ - 1) / block_size_;
    const int32_t n_physical = block_size > 0 ? 2 * n_blocks + 1 : 1;
    std::vector<int32_t> physical(n_physical);
    std::iota(physical.begin(), physical.end(), 0);
    if (block_size > 0) std::shuffle(physical.begin(), physical.end(), rng);
    table_.assign(physical.begin(), physical.begin() + n_blocks);
    k_.assign(n_physical * block_stride_, 0xFF);  // 0xFF.. is NaN in f16 and f32, and a NaN scale in q8
    v_.assign(n_physical * block_stride_, 0xFF);
    for (int32_t t = 0; t < ctx; ++t) {
      for (int32_t h = 0; h < shape.n_kv_heads; ++h) {
        const size_t src = (static_cast<size_t>(t) * shape.n_kv_heads + h) * hd;
        const size_t dst = table_[t / block_size_] * block_stride_ + h * head_stride_ + (t % block_size_) * row;
        quantize_row(dtype, k.data() + src, k_.data() + dst, shape.head_dim);
        quantize_row(dtype, v.data() + src, v_.data() + dst, shape.head_dim);
      }
    }
  }
  KvView view() const {
    return KvView{dtype_, length_, block_size_, table_.data(), k_.data(), v_.data(), block_stride_, head_stride_};
  }
  // Every physical block (those in the table and the NaN spares), for copying the storage elsewhere.
  std::span<const uint8_t> k_storage() const { return k_; }
  std::span<const uint8_t> v_storage() const { return v_; }
  std::span<const int32_t> block_table() const { return table_; }

 private:
  DType dtype_;
  int32_t length_, block_size_;
  size_t head_stride_ = 0, block_stride_ = 0;
  std::vector<int32_t> table_;
  std::vector<uint8_t> k_, v_;
};

}  // namespace inferscope
