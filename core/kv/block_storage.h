// The bytes behind a paged KV cache: for each layer one K pool and one V pool of n_blocks blocks,
// laid out block, then KV head, then slot (see paged_kv_cache.h), each pool 64-byte aligned.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "core/kv/kv_cache.h"

namespace inferscope {

class BlockStorage {
 public:
  BlockStorage(const KvGeometry& geometry, int32_t block_size, int32_t n_blocks);

  size_t head_stride() const { return head_stride_; }    // one head's rows of one block
  size_t block_stride() const { return block_stride_; }  // one block of one layer (all heads)
  const uint8_t* k_base(int32_t layer) const { return k_[layer].get(); }
  const uint8_t* v_base(int32_t layer) const { return v_[layer].get(); }
  // The row of (block, head, slot) in layer's K or V pool.
  uint8_t* k_row(int32_t layer, int32_t block, int32_t head, int32_t slot) {
    return k_[layer].get() + offset(block, head, slot);
  }
  uint8_t* v_row(int32_t layer, int32_t block, int32_t head, int32_t slot) {
    return v_[layer].get() + offset(block, head, slot);
  }
  // Copies block `from` into block `to` in every layer, K and V (copy-on-write), telling `listener`.
  void copy_block(int32_t from, int32_t to, const std::weak_ptr<KvCopyListener>& listener);
  // Every layer's K pool, then its V pool.
  std::vector<KvRegion> regions() const;

 private:
  static constexpr std::align_val_t kAlign{64};
  struct AlignedDelete {
    void operator()(uint8_t* p) const { ::operator delete[](p, kAlign); }
  };
  using Pool = std::unique_ptr<uint8_t[], AlignedDelete>;

  size_t offset(int32_t block, int32_t head, int32_t slot) const {
    return static_cast<size_t>(block) * block_stride_ + static_cast<size_t>(head) * head_stride_ +
           static_cast<size_t>(slot) * row_bytes_;
  }

  size_t row_bytes_;     // one token of one head: head_dim elements (head_dim / 32 blocks for q8)
  size_t head_stride_;   // block_size rows
  size_t block_stride_;  // n_kv_heads head strides
  size_t pool_bytes_;    // n_blocks block strides
  std::vector<Pool> k_, v_;  // one per layer
};

}  // namespace inferscope
