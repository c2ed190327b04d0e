#include "core/attention/flash_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/attention/flash_kernels.h"
#include "core/attention/kv_rows.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

int32_t group_size(const AttentionShape& shape) { return shape.n_heads / shape.n_kv_heads; }

// Query tokens per tile: each brings the group's query heads, kTileRows rows in all (at least one token).
int32_t tile_tokens(const AttentionShape& shape) { return std::max(1, FlashAttention::kTileRows / group_size(shape)); }

// A split chunk's partial result: m and l of each row, then its unnormalised O rows.
int64_t partial_floats(int32_t rows, int32_t head_dim) { return static_cast<int64_t>(rows) * (2 + head_dim); }

// One unit of work: tokens tok0 .. tok0+n_tok-1 of sequence `seq` with the query heads of KV head
// `kv_head`, against keys key0 .. key_end-1.
struct TileTask {
  int32_t seq, kv_head, tok0, n_tok, key0, key_end;
  int64_t partial;  // where this chunk's (m, l, O) go in the partials, or -1: finish into the output
};

// The split chunks of one query tile, stored one after the other from `partial`, merged in order.
struct MergeTask {
  int32_t seq, kv_head, tok0, n_tok;
  int64_t partial;
  int32_t n_chunks;
};

struct Plan {
  std::vector<TileTask> tiles;
  std::vector<MergeTask> merges;
  int64_t partial_floats = 0;
};

// Tiles and chunks of every sequence, from its own n_q, pos0 and the shape only (batch invariance).
Plan plan_tiles(std::span<const AttentionSeq> seqs, const AttentionShape& shape) {
  Plan plan;
  const int32_t group = group_size(shape), per_tile = tile_tokens(shape);
  for (int32_t si = 0; si < static_cast<int32_t>(seqs.size()); ++si) {
    const AttentionSeq& s = seqs[si];
    // decode: all queries in one tile, so parallelism comes from splitting the context instead
    const bool split = s.n_q <= per_tile && s.pos0 + s.n_q > FlashAttention::kSplitKeys;
    for (int32_t tok0 = 0; tok0 < s.n_q; tok0 += per_tile) {
      const int32_t n_tok = std::min(per_tile, s.n_q - tok0);
      const int32_t key_end = s.pos0 + tok0 + n_tok;  // keys visible to the tile's last row
      for (int32_t kvh = 0; kvh < shape.n_kv_heads; ++kvh) {
        if (!split) {
          plan.tiles.push_back(TileTask{si, kvh, tok0, n_tok, 0, key_end, -1});
          continue;
        }
        MergeTask merge{si, kvh, tok0, n_tok, plan.partial_floats, 0};
        for (int32_t key0 = 0; key0 < key_end; key0 += FlashAttention::kSplitKeys, ++merge.n_chunks) {
          const int32_t chunk_end = std::min(key_end, key0 + FlashAttention::kSplitKeys);
          plan.tiles.push_back(TileTask{si, kvh, tok0, n_tok, key0, chunk_end, plan.partial_floats});
          plan.partial_floats += partial_floats(n_tok * group, shape.head_dim);
        }
        plan.merges.push_back(merge);
      }
    }
  }
  return plan;
}

// One worker's buffers, sized for the largest query tile.
struct TileScratch {
  std::vector<float> q, o, m, l, k, v, s;

  explicit TileScratch(const AttentionShape& shape) {
    const size_t rows = static_cast<size_t>(tile_tokens(shape)) * group_size(shape), hd = shape.head_dim;
    q.resize(rows * hd);
    o.resize(rows * hd);
    m.resize(rows);
    l.resize(rows);
    k.resize(FlashAttention::kTileKeys * hd);
    v.resize(FlashAttention::kTileKeys * hd);
    s.resize(FlashAttention::kTileKeys);
  }
  static size_t bytes(const AttentionShape& shape) {
    const size_t rows = static_cast<size_t>(tile_tokens(shape)) * group_size(shape), hd = shape.head_dim;
    return sizeof(float) * (2 * rows * hd + 2 * rows + 2 * FlashAttention::kTileKeys * hd + FlashAttention::kTileKeys);
  }
};

// Where row r of a query tile lives in q and out, (n_q, n_heads * head_dim): token tok0 + r / group,
// query head kv_head * group + r % group.
size_t row_offset(const AttentionShape& shape, int32_t tok0, int32_t kv_head, int32_t r) {
  const int32_t group = group_size(shape);
  return (static_cast<size_t>(tok0 + r / group) * shape.n_heads + kv_head * group + r % group) * shape.head_dim;
}

void run_tile(const TileTask& task, std::span<const AttentionSeq> seqs, const AttentionShape& shape,
              const FlashRowKernels& kernels, TileScratch& w, float* partials) {
  const AttentionSeq& s = seqs[task.seq];
  const int32_t hd = shape.head_dim, group = group_size(shape), rows = task.n_tok * group;
  // Q tile, scaled by log2(e)/sqrt(d) so that scores come out in the log2 domain
  const float q_scale = kLog2e / std::sqrt(static_cast<float>(hd));
  for (int32_t r = 0; r < rows; ++r) {
    const float* src = s.q + row_offset(shape, task.tok0, task.kv_head, r);
    for (int32_t d = 0; d < hd; ++d) w.q[static_cast<size_t>(r) * hd + d] = src[d] * q_scale;
  }
  std::fill_n(w.m.begin(), rows, -std::numeric_limits<float>::infinity());
  std::fill_n(w.l.begin(), rows, 0.0f);
  std::fill_n(w.o.begin(), static_cast<size_t>(rows) * hd, 0.0f);

  for (int32_t t0 = task.key0; t0 < task.key_end; t0 += FlashAttention::kTileKeys) {
    const int32_t n = std::min(FlashAttention::kTileKeys, task.key_end - t0);
    // K and V tiles, read once for every row of the query tile
    gather_kv_rows(s.kv, KvPart::Keys, task.kv_head, t0, n, hd, w.k.data());
    gather_kv_rows(s.kv, KvPart::Values, task.kv_head, t0, n, hd, w.v.data());
    for (int32_t r = 0; r < rows; ++r) {
      // causal mask: a query sees the keys up to its own position
      const int32_t visible = std::min(n, s.pos0 + task.tok0 + r / group + 1 - t0);
      if (visible <= 0) continue;
      float* o = w.o.data() + static_cast<size_t>(r) * hd;
      kernels.scores(w.q.data() + static_cast<size_t>(r) * hd, w.k.data(), visible, hd, w.s.data());
      kernels.update(w.s.data(), visible, w.v.data(), hd, w.m[r], w.l[r], o);
    }
  }

  if (task.partial < 0) {
    for (int32_t r = 0; r < rows; ++r) {
      // output = O / l
      float* out = s.out + row_offset(shape, task.tok0, task.kv_head, r);
      for (int32_t d = 0; d < hd; ++d) out[d] = w.o[static_cast<size_t>(r) * hd + d] / w.l[r];
    }
    return;
  }
  float* dst = partials + task.partial;
  std::copy_n(w.m.begin(), rows, dst);
  std::copy_n(w.l.begin(), rows, dst + rows);
  std::copy_n(w.o.begin(), static_cast<size_t>(rows) * hd, dst + 2 * rows);
}

// Merges the chunks' partials exactly, in chunk order, into the output.
void run_merge(const MergeTask& task, std::span<const AttentionSeq> seqs, const AttentionShape& shape,
               const float* partials) {
  const AttentionSeq& s = seqs[task.seq];
  const int32_t hd = shape.head_dim, group = group_size(shape), rows = task.n_tok * group;
  const int64_t chunk_floats = partial_floats(rows, hd);
  for (int32_t r = 0; r < rows; ++r) {
    // m = max_c m_c
    float m = -std::numeric_limits<float>::infinity();
    for (int32_t c = 0; c < task.n_chunks; ++c) m = std::fmax(m, partials[task.partial + c * chunk_floats + r]);
    // l = sum_c exp(m_c - m) * l_c;  O = sum_c exp(m_c - m) * O_c / l
    float* out = s.out + row_offset(shape, task.tok0, task.kv_head, r);
    std::fill_n(out, hd, 0.0f);
    float l = 0.0f;
    for (int32_t c = 0; c < task.n_chunks; ++c) {
      const float* chunk = partials + task.partial + c * chunk_floats;
      const float weight = std::exp2(chunk[r] - m);  // a chunk the row cannot see has m_c = -inf: weight 0
      l += weight * chunk[rows + r];
      const float* o = chunk + 2 * rows + static_cast<size_t>(r) * hd;
      for (int32_t d = 0; d < hd; ++d) out[d] += weight * o[d];
    }
    for (int32_t d = 0; d < hd; ++d) out[d] /= l;
  }
}

}  // namespace

void FlashAttention::forward(std::span<const AttentionSeq> seqs, const AttentionShape& shape, ThreadPool& pool) {
  const Plan plan = plan_tiles(seqs, shape);
  partials_.resize(static_cast<size_t>(plan.partial_floats));
  const FlashRowKernels& kernels = flash_kernels();
  pool.parallel_for(static_cast<int64_t>(plan.tiles.size()), 1, [&](int64_t begin, int64_t end) {
    TileScratch scratch(shape);
    for (int64_t t = begin; t < end; ++t) run_tile(plan.tiles[t], seqs, shape, kernels, scratch, partials_.data());
  });
  pool.parallel_for(static_cast<int64_t>(plan.merges.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) run_merge(plan.merges[t], seqs, shape, partials_.data());
  });
}

size_t FlashAttention::scratch_bytes(std::span<const AttentionSeq> seqs, const AttentionShape& shape) const {
  if (seqs.empty()) return 0;
  return TileScratch::bytes(shape) + sizeof(float) * static_cast<size_t>(plan_tiles(seqs, shape).partial_floats);
}

}  // namespace inferscope
