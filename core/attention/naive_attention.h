// Naive attention: per (sequence, head) the whole score matrix S = Q·Kᵀ/√d (n_q x the keys the
// queries see: the context, or the window and n_q) is materialised, masked, softmaxed row by row,
// then multiplied by V. Scratch grows as n_q x context.
#pragma once
#include "core/attention/attention.h"

namespace inferscope {

class NaiveAttention final : public Attention {
 public:
  std::string name() const override { return "naive"; }
  void forward(std::span<const AttentionSeq> seqs, const AttentionShape& shape, ThreadPool& pool) override;
  size_t scratch_bytes(std::span<const AttentionSeq> seqs, const AttentionShape& shape) const override;
};

}  // namespace inferscope
