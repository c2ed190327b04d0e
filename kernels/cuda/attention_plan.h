// Internal to kernels/cuda: the work lists of the attention kernels, planned on the host from each
// sequence's own n_q, pos0 and the shape (never from the rest of the batch), and the layout that
// carries them to the device: a header [sequences][work items][merges], and the data (scores or
// partial states) after it in one scratch buffer or wherever the caller of launch_attention puts it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cuda/attention.h"
#include "kernels/cuda/host_device.h"

namespace inferscope::gpu {

constexpr int32_t kTileRows = 16;  // query rows per flash/decode block: (token, query head of one KV head)
constexpr int32_t kTileKeys = 32;  // keys per K/V tile, one per lane; tiles start at multiples of 32

// The first key a query at `pos` sees.
INFERSCOPE_HD inline int32_t first_visible_key(const DeviceAttentionShape& shape, int32_t pos) {
  return shape.window > 0 && pos >= shape.window ? pos - shape.window + 1 : 0;
}

// One naive row group: token `token` of sequence `seq`, every query head; head h's scores (keys
// first_key .. first_key+span-1 of the sequence's first query, row-local) start at scores + h * span.
struct NaiveTask {
  int32_t seq, token, first_key, span;
  int64_t scores;  // float offset into the data section
};

// One flash/decode block: rows row0 .. row0+n_rows-1 of (token, query head in the group) for KV head
// kv_head of sequence seq (row = token * group + head in group), against keys key0 .. key_end-1.
struct TileTask {
  int32_t seq, kv_head, row0, n_rows, key0, key_end;
  int64_t partial;  // float offset of this split's partial states, or -1: finish into the output
};

// A decode row tile's n_splits partial states, stored one split after the other from `partial`.
struct MergeTask {
  int32_t seq, kv_head, row0, n_rows, n_splits;
  int64_t partial;
};

// Floats of one split's partial states for n_rows rows: m of each row, l of each row, then the O rows.
INFERSCOPE_HD inline int64_t partial_floats(int32_t n_rows, int32_t head_dim) { return static_cast<int64_t>(n_rows) * (2 + head_dim); }

// In one scratch buffer (the calls that take one): the header at its start, the data from data_offset.
size_t data_offset(const AttentionPlan& plan);
size_t scratch_bytes(const AttentionPlan& plan);

// Each throws std::invalid_argument naming what it cannot run (shape, dtype, query count, a context
// longer than the cache).
AttentionPlan plan_naive(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape);
AttentionPlan plan_flash(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape);
// Decode and DecodeWide share one work list; `schedule` names the kernel that runs it.
AttentionPlan plan_decode(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape,
                          AttentionSchedule schedule = AttentionSchedule::Decode);

}  // namespace inferscope::gpu
