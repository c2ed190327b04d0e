// FlashAttention (Dao et al.) on the CPU: queries in tiles of kTileRows rows (tokens x the query heads
// of one KV head, so GQA heads read each K/V tile once), keys in tiles of kTileKeys read through the
// KvView (a tile may span paged blocks). Each row keeps a running max m, running sum l and an
// unnormalised output O, rescaled by exp(m_old - m_new) as tiles arrive: scores never take more
// than one row of one tile.
//
// Every query row sees its context as fixed chunks of kSplitKeys keys (0..255, 256..511, ...): each
// chunk runs its own online softmax over kTileKeys-key tiles, and the chunks' partial (m, l, O) are
// folded in chunk order. With a sliding window, chunks and tiles before the window of a query tile's
// first row are skipped, never read, and each row starts at its own window's first key. Decode (a
// sequence whose queries fit in one tile) runs its chunks in parallel and merges them afterwards
// (Flash-Decoding); a prefill tile folds them as it goes. Both do the same arithmetic, so a row's
// output depends only on its position and the K/V it sees: never on how many queries share the step
// (prefill, chunked prefill, decode), the rest of the batch, or the thread count. Outputs are
// bit-identical across all of them.
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
