// FlashAttention (Dao et al.) on the CPU: queries in tiles of kTileRows rows (tokens x the query heads
// of one KV head, so GQA heads read each K/V tile once), keys in tiles of kTileKeys read through the
// KvView (a tile may span paged blocks). Each row keeps a running max m, running sum l and an
// unnormalised output O, rescaled by exp(m_old - m_new) as tiles arrive: scores never take more
// than one row of one tile.
//
// Decode (a sequence whose queries fit in one tile) splits its context into fixed chunks of
// kSplitKeys keys, run in parallel, whose partial (m, l, O) are merged exactly afterwards
// (Flash-Decoding). Every tile and chunk boundary depends only on the sequence's own n_q, pos0 and
// the shape, never on the thread count or the rest of the batch, so outputs are bit-identical
// across both.
#pragma once
#include <vector>

#include "core/attention/attention.h"

namespace inferscope {

class FlashAttention final : public Attention {
 public:
  static constexpr int32_t kTileRows = 64;   // Br: query rows per tile (tokens x heads per KV head)
  static constexpr int32_t kTileKeys = 64;   // Bc: keys per K/V tile
  static constexpr int32_t kSplitKeys = 256; // keys per split-K chunk of a decode sequence

  std::string name() const override { return "flash"; }
  void forward(std::span<const AttentionSeq> seqs, const AttentionShape& shape, ThreadPool& pool) override;
  // Per worker: one query tile (Q and O), one K and one V tile and one row of scores; plus every
  // split chunk's partial (m, l, O), which the merge reads.
  size_t scratch_bytes(std::span<const AttentionSeq> seqs, const AttentionShape& shape) const override;

 private:
  std::vector<float> partials_;  // split chunks' (m, l, O), reused across calls
};

}  // namespace inferscope
