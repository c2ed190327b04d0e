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
// `kv_head`, against keys key0 .. key_end-1 (key0: the first any of its rows sees, or a chunk's start).
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

// The start of the aligned run of `size` keys (a split chunk, a K/V tile) that holds key `pos`.
int32_t run_start(int32_t pos, int32_t size) { return pos / size * size; }

// Tiles and chunks of every sequence, from its own n_q, pos0 and the shape only (batch invariance).
// With a window, chunks before the one holding the tile's first visible key are left out.
Plan plan_tiles(std::span<const AttentionSeq> seqs, const AttentionShape& shape) {
  Plan plan;
  const int32_t group = group_size(shape), per_tile = tile_tokens(shape);
  for (int32_t si = 0; si < static_cast<int32_t>(seqs.size()); ++si) {
    const AttentionSeq& s = seqs[si];
    for (int32_t tok0 = 0; tok0 < s.n_q; tok0 += per_tile) {
      const int32_t n_tok = std::min(per_tile, s.n_q - tok0);
      const int32_t key_lo = first_visible_key(shape, s.pos0 + tok0);  // keys visible to the tile's first row
      const int32_t key_end = s.pos0 + tok0 + n_tok;                   // and to its last row
      const int32_t first_chunk = run_start(key_lo, FlashAttention::kSplitKeys);
      // decode: all queries in one tile, so parallelism comes from splitting the context instead
      const bool split = s.n_q <= per_tile && key_end > first_chunk + FlashAttention::kSplitKeys;
      for (int32_t kvh = 0; kvh < shape.n_kv_heads; ++kvh) {
        if (!split) {
          plan.tiles.push_back(TileTask{si, kvh, tok0, n_tok, key_lo, key_end, -1});
          continue;
        }
        MergeTask merge{si, kvh, tok0, n_tok, plan.partial_floats, 0};
        for (int32_t c0 = first_chunk; c0 < key_end; c0 += FlashAttention::kSplitKeys, ++merge.n_chunks) {
          const int32_t chunk_end = std::min(key_end, c0 + FlashAttention::kSplitKeys);
          plan.tiles.push_back(TileTask{si, kvh, tok0, n_tok, std::max(c0, key_lo), chunk_end, plan.partial_floats});
          plan.partial_floats += partial_floats(n_tok * group, shape.head_dim);
        }
        plan.merges.push_back(merge);
      }
    }
  }
  return plan;
}

// One worker's buffers, sized for the largest query tile: the chunk in progress (m, l, O) and,
// when the tile covers several chunks, their merge so far (mt, lt, ot).
struct TileScratch {
  std::vector<float> q, o, m, l, ot, mt, lt, k, v, s;

  explicit TileScratch(const AttentionShape& shape) {
    const size_t rows = static_cast<size_t>(tile_tokens(shape)) * group_size(shape), hd = shape.head_dim;
    q.resize(rows * hd);
    o.resize(rows * hd);
    m.resize(rows);
    l.resize(rows);
    ot.resize(rows * hd);
    mt.resize(rows);
    lt.resize(rows);
    k.resize(FlashAttention::kTileKeys * hd);
    v.resize(FlashAttention::kTileKeys * hd);
    s.resize(FlashAttention::kTileKeys);
  }
  static size_t bytes(const AttentionShape& shape) {
    const size_t rows = static_cast<size_t>(tile_tokens(shape)) * group_size(shape), hd = shape.head_dim;
    return sizeof(float) * (3 * rows * hd + 4 * rows + 2 * FlashAttention::kTileKeys * hd + FlashAttention::kTileKeys);
  }
};

// Where row r of a query tile lives in q and out, (n_q, n_heads * head_dim): token tok0 + r / group,
// query head kv_head * group + r % group.
size_t row_offset(const AttentionShape& shape, int32_t tok0, int32_t kv_head, int32_t r) {
  const int32_t group = group_size(shape);
  return (static_cast<size_t>(tok0 + r / group) * shape.n_heads + kv_head * group + r % group) * shape.head_dim;
}

// Folds one chunk's (m_c, l_c, O_c) into a row's merge so far (m, l, O), which starts at (-inf, 0, 0).
// Every path (a prefill tile, a split decode's merge) folds a row's chunks in chunk order through
// here, so a row's output depends only on its own context.
void merge_chunk(float m_c, float l_c, const float* o_c, int32_t head_dim, float& m, float& l, float* o) {
  if (m_c == -std::numeric_limits<float>::infinity()) return;  // the row sees no key of this chunk
  // m_new = max(m, m_c);  l = exp(m - m_new) * l + exp(m_c - m_new) * l_c;  O likewise
  const float m_new = std::fmax(m, m_c);
  const float a = std::exp2(m - m_new), b = std::exp2(m_c - m_new);
  l = a * l + b * l_c;
  for (int32_t d = 0; d < head_dim; ++d) o[d] = a * o[d] + b * o_c[d];
  m = m_new;
}

void run_tile(const TileTask& task, std::span<const AttentionSeq> seqs, const AttentionShape& shape,
              const FlashRowKernels& kernels, TileScratch& w, float* partials) {
  const AttentionSeq& s = seqs[task.seq];
  const int32_t hd = shape.head_dim, group = group_size(shape), rows = task.n_tok * group;
  const size_t tile_floats = static_cast<size_t>(rows) * hd;
  // Q tile, scaled by log2(e)/sqrt(d) so that scores come out in the log2 domain
  const float q_scale = kLog2e / std::sqrt(static_cast<float>(hd));
  for (int32_t r = 0; r < rows; ++r) {
    const float* src = s.q + row_offset(shape, task.tok0, task.kv_head, r);
    for (int32_t d = 0; d < hd; ++d) w.q[static_cast<size_t>(r) * hd + d] = src[d] * q_scale;
  }
  std::fill_n(w.mt.begin(), rows, -std::numeric_limits<float>::infinity());
  std::fill_n(w.lt.begin(), rows, 0.0f);
  std::fill_n(w.ot.begin(), tile_floats, 0.0f);

  // The keys in chunks of kSplitKeys (a split task holds exactly one) and tiles of kTileKeys, both at
  // fixed positions (multiples of their size), whatever key0: each chunk starts its own online softmax,
  // then folds into the row's merge, as a split decode does.
  for (int32_t c0 = run_start(task.key0, FlashAttention::kSplitKeys); c0 < task.key_end;
       c0 += FlashAttention::kSplitKeys) {
    const int32_t c_end = std::min(task.key_end, c0 + FlashAttention::kSplitKeys);
    std::fill_n(w.m.begin(), rows, -std::numeric_limits<float>::infinity());
    std::fill_n(w.l.begin(), rows, 0.0f);
    std::fill_n(w.o.begin(), tile_floats, 0.0f);
    // tiles wholly before the window of the tile's first row are never read
    for (int32_t t0 = std::max(c0, run_start(task.key0, FlashAttention::kTileKeys)); t0 < c_end;
         t0 += FlashAttention::kTileKeys) {
      const int32_t t_end = std::min(t0 + FlashAttention::kTileKeys, c_end);
      // K and V of the tile's keys some row sees (from key0), read once for every row of the query tile
      const int32_t g0 = std::max(t0, task.key0);
      gather_kv_rows(s.kv, KvPart::Keys, task.kv_head, g0, t_end - g0, hd, w.k.data());
      gather_kv_rows(s.kv, KvPart::Values, task.kv_head, g0, t_end - g0, hd, w.v.data());
      for (int32_t r = 0; r < rows; ++r) {
        // causal and window mask: a row sees keys begin .. end-1 of this tile, fixed by its position
        // alone, so its scores and their order never depend on the step it runs in
        const int32_t pos = s.pos0 + task.tok0 + r / group;
        const int32_t begin = std::max(t0, first_visible_key(shape, pos)), end = std::min(t_end, pos + 1);
        if (end <= begin) continue;
        const size_t first = static_cast<size_t>(begin - g0) * hd;
        float* o = w.o.data() + static_cast<size_t>(r) * hd;
        kernels.scores(w.q.data() + static_cast<size_t>(r) * hd, w.k.data() + first, end - begin, hd, w.s.data());
        kernels.update(w.s.data(), end - begin, w.v.data() + first, hd, w.m[r], w.l[r], o);
      }
    }
    if (task.partial >= 0) {
      // a split chunk: its (m, l, O) go to the partials, merged once every chunk is done
      float* dst = partials + task.partial;
      std::copy_n(w.m.begin(), rows, dst);
      std::copy_n(w.l.begin(), rows, dst + rows);
      std::copy_n(w.o.begin(), tile_floats, dst + 2 * rows);
      return;
    }
    for (int32_t r = 0; r < rows; ++r) {
      merge_chunk(w.m[r], w.l[r], w.o.data() + static_cast<size_t>(r) * hd, hd, w.mt[r], w.lt[r],
                  w.ot.data() + static_cast<size_t>(r) * hd);
    }
  }
  for (int32_t r = 0; r < rows; ++r) {
    // output = O / l
    float* out = s.out + row_offset(shape, task.tok0, task.kv_head, r);
    for (int32_t d = 0; d < hd; ++d) out[d] = w.ot[static_cast<size_t>(r) * hd + d] / w.lt[r];
  }
}

// Merges a split tile's chunks, in chunk order, into the output.
void run_merge(const MergeTask& task, std::span<const AttentionSeq> seqs, const AttentionShape& shape,
               const float* partials) {
  const AttentionSeq& s = seqs[task.seq];
  const int32_t hd = shape.head_dim, group = group_size(shape), rows = task.n_tok * group;
  const int64_t chunk_floats = partial_floats(rows, hd);
  for (int32_t r = 0; r < rows; ++r) {
    float* out = s.out + row_offset(shape, task.tok0, task.kv_head, r);
    std::fill_n(out, hd, 0.0f);
    float m = -std::numeric_limits<float>::infinity(), l = 0.0f;
    for (int32_t c = 0; c < task.n_chunks; ++c) {
      const float* chunk = partials + task.partial + c * chunk_floats;
      merge_chunk(chunk[r], chunk[rows + r], chunk + 2 * rows + static_cast<size_t>(r) * hd, hd, m, l, out);
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
