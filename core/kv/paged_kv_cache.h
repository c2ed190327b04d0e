// vLLM's PagedAttention memory manager: the KV budget is a pool of fixed-size physical blocks of
// block_size tokens; each sequence has a block table (logical block i -> physical block), blocks are
// taken on demand as tokens arrive and returned when the sequence ends. Blocks are reference-counted
// so sequences can share them (fork with copy-on-write, prefix caching).
//
// Layout (per layer, K and V in separate pools): physical block b of layer l holds, for each KV
// head h, block_size rows of head_dim elements (row_bytes each: head_dim / 32 Q8_0 blocks for q8):
//   K(l, b, h, slot) = k_pool[l] + b * block_stride + h * head_stride + slot * row_bytes
// with head_stride = block_size * row_bytes and block_stride = n_kv_heads * head_stride, so one
// head's keys of one block are one contiguous, 64-byte aligned run that a kernel (CPU or CUDA) reads
// with aligned vector loads.
//
// Prefix caching: a full block is identified by hash(parent block's hash, its token ids). When a
// sequence ends, its full blocks go to an LRU list of cached blocks (still holding their K/V); a new
// prompt that starts with the same tokens re-attaches them instead of recomputing. Cached blocks are
// reclaimed (evicted, least recently used first) only when free memory runs out.
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/kv/kv_cache.h"

namespace inferscope {

class PagedKvCache final : public KvCache {
 public:
  // budget_bytes / (bytes of one block across all layers, K and V) blocks; throws
  // std::invalid_argument for a block size other than 8, 16 or 32 or a budget below one block.
  PagedKvCache(KvGeometry geometry, int32_t block_size, size_t budget_bytes, bool prefix_cache);
  ~PagedKvCache() override;

  std::string name() const override { return "paged"; }
  bool allocate(SeqId seq, int32_t n_new, std::span<const int32_t> tokens = {}) override;
  int32_t attach_prefix(SeqId seq, std::span<const int32_t> prompt) override;
  void free(SeqId seq) override;
  void discard(SeqId seq) override;
  bool fork(SeqId parent, SeqId child) override;
  void truncate(SeqId seq, int32_t length) override;
  void name_tokens(SeqId seq, std::span<const int32_t> tokens) override;
  int32_t length(SeqId seq) const override;
  void store(int32_t layer, SeqId seq, int32_t pos, const float* k, const float* v) override;
  KvView view(int32_t layer, SeqId seq) const override;
  KvStats stats() const override;
  KvSnapshot snapshot() const override;
  std::vector<KvRegion> storage_regions() const override;

  int32_t block_size() const { return block_size_; }
  int32_t total_blocks() const;
  size_t block_bytes() const;  // one block across all layers, K and V

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int32_t block_size_;
};

}  // namespace inferscope
