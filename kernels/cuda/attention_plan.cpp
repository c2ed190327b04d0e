#include "kernels/cuda/attention_plan.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace inferscope::gpu {
namespace {

constexpr size_t kSectionAlign = 256;

size_t align_up(size_t n) { return (n + kSectionAlign - 1) / kSectionAlign * kSectionAlign; }

void check_shape(const DeviceAttentionShape& shape) {
  if (shape.kv_dtype != DType::F16 && shape.kv_dtype != DType::F32) {
    throw std::invalid_argument("CUDA attention: KV dtype " + std::string(dtype_name(shape.kv_dtype)) +
                                " is not supported (f16 and f32 are)");
  }
  const int32_t d = shape.head_dim;
  if (!supported_head_dim(d)) {
    throw std::invalid_argument("CUDA attention: head_dim " + std::to_string(d) + " is not supported (8, 64, 128, 256 are)");
  }
  if (shape.n_kv_heads <= 0 || shape.n_heads <= 0 || shape.n_heads % shape.n_kv_heads != 0) {
    throw std::invalid_argument("CUDA attention: n_heads " + std::to_string(shape.n_heads) +
                                " is not a positive multiple of n_kv_heads " + std::to_string(shape.n_kv_heads));
  }
  if (shape.window < 0) throw std::invalid_argument("CUDA attention: negative window " + std::to_string(shape.window));
}

void check_seq(const DeviceAttentionSeq& s, size_t index) {
  if (s.n_q < 0 || s.pos0 < 0 || s.pos0 + s.n_q > s.kv.length) {
    throw std::invalid_argument("CUDA attention: sequence " + std::to_string(index) + " has queries at " +
                                std::to_string(s.pos0) + " .. " + std::to_string(s.pos0 + s.n_q - 1) +
                                " but its cache holds " + std::to_string(s.kv.length) + " tokens");
  }
}

// Appends `items` at the next aligned offset of the header and returns that offset.
template <typename T>
size_t append(std::vector<uint8_t>& header, std::span<const T> items) {
  const size_t at = align_up(header.size());
  header.resize(at + items.size_bytes());
  if (!items.empty()) std::memcpy(header.data() + at, items.data(), items.size_bytes());
  return at;
}

AttentionPlan assemble(AttentionSchedule schedule, std::span<const DeviceAttentionSeq> seqs,
                       std::span<const NaiveTask> naive, std::span<const TileTask> tiles,
                       std::span<const MergeTask> merges, int64_t data_floats) {
  AttentionPlan plan;
  plan.schedule = schedule;
  append(plan.header, seqs);
  plan.tasks_at = naive.empty() ? append(plan.header, tiles) : append(plan.header, naive);
  plan.n_tasks = static_cast<int32_t>(naive.empty() ? tiles.size() : naive.size());
  plan.merges_at = append(plan.header, merges);
  plan.n_merges = static_cast<int32_t>(merges.size());
  plan.data_bytes = static_cast<size_t>(data_floats) * sizeof(float);
  return plan;
}

// The validated shape and sequences, then for each sequence and KV head its row tiles: rows are
// (token, query head in the group), kTileRows per tile, with the keys the tile's rows see.
template <typename OnTile>
void for_each_row_tile(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape, OnTile on_tile) {
  check_shape(shape);
  const int32_t group = shape.n_heads / shape.n_kv_heads;
  for (size_t si = 0; si < seqs.size(); ++si) {
    const DeviceAttentionSeq& s = seqs[si];
    check_seq(s, si);
    const int32_t n_rows = s.n_q * group;
    for (int32_t kvh = 0; kvh < shape.n_kv_heads; ++kvh) {
      for (int32_t row0 = 0; row0 < n_rows; row0 += kTileRows) {
        const int32_t rows = std::min(kTileRows, n_rows - row0);
        const int32_t key0 = first_visible_key(shape, s.pos0 + row0 / group);
        const int32_t key_end = s.pos0 + (row0 + rows - 1) / group + 1;
        on_tile(TileTask{static_cast<int32_t>(si), kvh, row0, rows, key0, key_end, -1});
      }
    }
  }
}

}  // namespace

bool supported_head_dim(int32_t head_dim) { return head_dim == 8 || head_dim == 64 || head_dim == 128 || head_dim == 256; }

size_t data_offset(const AttentionPlan& plan) { return align_up(plan.header.size()); }
size_t scratch_bytes(const AttentionPlan& plan) { return data_offset(plan) + plan.data_bytes; }

AttentionPlan plan_naive(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape) {
  check_shape(shape);
  std::vector<NaiveTask> tasks;
  int64_t floats = 0;
  for (size_t si = 0; si < seqs.size(); ++si) {
    const DeviceAttentionSeq& s = seqs[si];
    check_seq(s, si);
    // every row of the sequence gets the keys from its first query's first visible key to its last query
    const int32_t first = first_visible_key(shape, s.pos0), span = s.pos0 + s.n_q - first;
    for (int32_t t = 0; t < s.n_q; ++t) {
      tasks.push_back(NaiveTask{static_cast<int32_t>(si), t, first, span, floats});
      floats += int64_t{shape.n_heads} * span;
    }
  }
  return assemble(AttentionSchedule::Naive, seqs, tasks, {}, {}, floats);
}

AttentionPlan plan_flash(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape) {
  std::vector<TileTask> tiles;
  for_each_row_tile(seqs, shape, [&](const TileTask& tile) { tiles.push_back(tile); });
  return assemble(AttentionSchedule::Flash, seqs, {}, tiles, {}, 0);
}

AttentionPlan plan_decode(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape,
                          AttentionSchedule schedule) {
  for (size_t si = 0; si < seqs.size(); ++si) {
    if (seqs[si].n_q < 1 || seqs[si].n_q > kMaxDecodeQueries) {
      throw std::invalid_argument("CUDA decode attention: sequence " + std::to_string(si) + " has " +
                                  std::to_string(seqs[si].n_q) + " queries (1 .. " +
                                  std::to_string(kMaxDecodeQueries) + " are supported)");
    }
  }
  std::vector<TileTask> tiles;
  std::vector<MergeTask> merges;
  int64_t floats = 0;
  for_each_row_tile(seqs, shape, [&](const TileTask& tile) {
    // chunks of kDecodeSplitKeys positions from the one holding the tile's first visible key
    const int32_t first_chunk = tile.key0 / kDecodeSplitKeys, end_chunk = (tile.key_end - 1) / kDecodeSplitKeys + 1;
    merges.push_back(MergeTask{tile.seq, tile.kv_head, tile.row0, tile.n_rows, end_chunk - first_chunk, floats});
    for (int32_t c = first_chunk; c < end_chunk; ++c) {
      TileTask split = tile;
      split.key0 = std::max(tile.key0, c * kDecodeSplitKeys);
      split.key_end = std::min(tile.key_end, (c + 1) * kDecodeSplitKeys);
      split.partial = floats;
      tiles.push_back(split);
      floats += partial_floats(tile.n_rows, shape.head_dim);
    }
  });
  return assemble(schedule, seqs, {}, tiles, merges, floats);
}

}  // namespace inferscope::gpu
