// Attention over the KV cache: softmax(Q·Kᵀ/√d + causal and window mask)·V for every query head,
// reading K/V through a KvView (block table or one contiguous region). Implementations differ in how
// they schedule the work and what scratch memory they need, never in the function they compute.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/kv/kv_cache.h"

namespace inferscope {

class ThreadPool;

struct AttentionShape {
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;  // query heads h use KV head h / (n_heads / n_kv_heads) (GQA)
  int32_t head_dim = 0;
  // Sliding window (0: none): a query at position p sees only keys max(0, p - window + 1) .. p, itself
  // and the window - 1 before it (llama.cpp's standard SWA masks p0 when p - p0 >= window).
  int32_t window = 0;
};

// The first key position a query at `pos` sees: 0 without a window.
inline int32_t first_visible_key(const AttentionShape& shape, int32_t pos) {
  return shape.window > 0 && pos >= shape.window ? pos - shape.window + 1 : 0;
}

// One sequence's queries in this step: n_q tokens at positions pos0 .. pos0+n_q-1, each attending
// to cached positions first_visible_key .. its own position (the cache already holds this step's K/V).
struct AttentionSeq {
  const float* q = nullptr;  // (n_q, n_heads * head_dim)
  float* out = nullptr;      // (n_q, n_heads * head_dim)
  int32_t n_q = 0;
  int32_t pos0 = 0;
  KvView kv;
};

class Attention {
 public:
  virtual ~Attention() = default;
  virtual std::string name() const = 0;
  virtual void forward(std::span<const AttentionSeq> seqs, const AttentionShape& shape, ThreadPool& pool) = 0;
  // Scratch memory one forward() call needs for these sequences (per worker, at its peak).
  virtual size_t scratch_bytes(std::span<const AttentionSeq> seqs, const AttentionShape& shape) const = 0;
};

}  // namespace inferscope
