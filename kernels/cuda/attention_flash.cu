// FlashAttention (prefill) and split-K paged decode on the GPU: one kernel runs a tile of query rows
// against a range of keys, K/V tiles staged in shared memory, each row's online softmax in one warp
// (a lane per key of the tile for the scores, a lane per head_dim element for the accumulator). Prefill
// finishes each row into the output; decode writes each split chunk's partial state and a second
// kernel merges the chunks in chunk order. A row's arithmetic depends only on its position, the keys
// it sees and the fixed 32-key tiles and 512-key chunks they fall in: never on its neighbours.
// The wide decode (kWide) runs the same arithmetic and differs only in how a tile is staged and who
// computes which row: it looks each key row up in the block table once and reads it in 16-byte loads
// (today's tile reads every element through the table, two bytes at a time), and it deals the rows out
// to the warps in turn, so that the few rows of a decode step (the group's query heads) keep every
// warp busy (today's gives each warp four consecutive rows: one warp of four at GQA 4 and one query).
#include <mutex>
#include <set>

#include "kernels/cuda/attention.h"
#include "kernels/cuda/attention_device.cuh"
#include "kernels/cuda/softmax_math.h"

namespace inferscope::gpu {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kRowsPerWarp = kTileRows / kWarps;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kLog2e = 1.4426950408889634f;

static_assert(kTileKeys == 32, "one lane per key of a tile");
static_assert(kDecodeSplitKeys % kTileKeys == 0, "split chunks are whole tiles");

__device__ float warp_max(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(kFullMask, x, offset));
  return x;
}

__device__ float warp_sum(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(kFullMask, x, offset);
  return x;
}

// Shared memory: the Q tile (scaled into the log2 domain), the K tile with rows padded by one float
// (lanes reading different keys hit different banks) and the V tile.
template <int D>
constexpr size_t tile_shared_bytes() {
  return sizeof(float) * (kTileRows * D + kTileKeys * (D + 1) + kTileKeys * D);
}

// Keys j0 .. j1-1 of the tile from t0 into shared memory, each element through the block table.
template <int D, typename KvT>
__device__ void stage_elements(const DeviceAttentionSeq& s, int32_t kv_head, int32_t t0, int32_t j0, int32_t j1,
                               float* k_tile, float* v_tile) {
  for (int i = threadIdx.x; i < (j1 - j0) * D; i += kThreads) {
    const int32_t j = j0 + i / D, d = i % D;
    k_tile[j * (D + 1) + d] = kv_element<KvT>(s.kv, s.kv.k_base, kv_head, t0 + j, d, D);
    v_tile[j * D + d] = kv_element<KvT>(s.kv, s.kv.v_base, kv_head, t0 + j, d, D);
  }
}

// The same keys, each row's K and V addresses found once (by one thread, into `rows`) and read in
// 16-byte loads where both are 16-byte aligned (element by element where not).
template <int D, typename KvT>
__device__ void stage_rows(const DeviceAttentionSeq& s, int32_t kv_head, int32_t t0, int32_t j0, int32_t j1,
                           float* k_tile, float* v_tile, const KvT* (&rows)[2][kTileKeys]) {
  constexpr int kPerLoad = 16 / sizeof(KvT);  // elements per 16-byte load
  constexpr int kLoads = D / kPerLoad;        // loads per row
  static_assert(D % kPerLoad == 0, "a row is whole 16-byte loads");
  const KvDeviceView& kv = s.kv;
  if (threadIdx.x < j1 - j0) {
    const int32_t j = j0 + threadIdx.x, t = t0 + j;
    rows[0][j] = kv_row<KvT>(kv, kv.k_base, kv_head, t, D);
    rows[1][j] = kv_row<KvT>(kv, kv.v_base, kv_head, t, D);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < (j1 - j0) * kLoads; i += kThreads) {
    const int32_t j = j0 + i / kLoads, d0 = i % kLoads * kPerLoad;
    const KvT* const k_row = rows[0][j];
    const KvT* const v_row = rows[1][j];
    float k[kPerLoad], v[kPerLoad];
    if (((reinterpret_cast<uintptr_t>(k_row) | reinterpret_cast<uintptr_t>(v_row)) & 15) == 0) {
      const uint4 kw = __ldg(reinterpret_cast<const uint4*>(k_row) + d0 / kPerLoad);
      const uint4 vw = __ldg(reinterpret_cast<const uint4*>(v_row) + d0 / kPerLoad);
      const auto* kx = reinterpret_cast<const KvT*>(&kw);
      const auto* vx = reinterpret_cast<const KvT*>(&vw);
#pragma unroll
      for (int e = 0; e < kPerLoad; ++e) {
        k[e] = to_float(kx[e]);
        v[e] = to_float(vx[e]);
      }
    } else {
#pragma unroll
      for (int e = 0; e < kPerLoad; ++e) {
        k[e] = to_float(k_row[d0 + e]);
        v[e] = to_float(v_row[d0 + e]);
      }
    }
#pragma unroll
    for (int e = 0; e < kPerLoad; ++e) {
      k_tile[j * (D + 1) + d0 + e] = k[e];
      v_tile[j * D + d0 + e] = v[e];
    }
  }
}

template <int D, typename KvT, bool kWide>
__global__ void __launch_bounds__(kThreads) flash_tile_kernel(const DeviceAttentionSeq* seqs, const TileTask* tasks,
                                                                float* partials, DeviceAttentionShape shape) {
  constexpr int kPerLane = (D + 31) / 32;  // accumulator elements per lane: d = lane + 32 * i
  extern __shared__ float shared[];
  float* q_tile = shared;
  float* k_tile = q_tile + kTileRows * D;
  float* v_tile = k_tile + kTileKeys * (D + 1);
  __shared__ const KvT* rows[2][kTileKeys];  // the wide stage's K and V rows
  const TileTask task = tasks[blockIdx.x];
  const DeviceAttentionSeq& s = seqs[task.seq];
  const int32_t group = shape.n_heads / shape.n_kv_heads;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // a warp's i-th row: dealt out in turn (wide), or the warp's own run of kRowsPerWarp
  const auto row_of = [](int w, int i) { return kWide ? i * kWarps + w : w * kRowsPerWarp + i; };

  // Q rows: row r is token (row0 + r) / group, query head kv_head * group + (row0 + r) % group
  const float q_scale = kLog2e * rsqrtf(static_cast<float>(D));
  for (int i = threadIdx.x; i < task.n_rows * D; i += kThreads) {
    const int32_t row = task.row0 + i / D;
    q_tile[i] = s.q[qo_offset(shape, row / group, task.kv_head * group + row % group) + i % D] * q_scale;
  }

  OnlineSoftmax state[kRowsPerWarp];
  float o[kRowsPerWarp][kPerLane] = {};
  for (int32_t t0 = task.key0 / kTileKeys * kTileKeys; t0 < task.key_end; t0 += kTileKeys) {
    __syncthreads();  // the previous tile is no longer read (and, the first time, Q is written)
    // K/V of the tile's keys in the task's range; the rest of the tile stays unread
    const int32_t lo = max(t0, task.key0), hi = min(t0 + kTileKeys, task.key_end);
    if constexpr (kWide) stage_rows<D, KvT>(s, task.kv_head, t0, lo - t0, hi - t0, k_tile, v_tile, rows);
    else stage_elements<D, KvT>(s, task.kv_head, t0, lo - t0, hi - t0, k_tile, v_tile);
    __syncthreads();
    for (int i = 0; i < kRowsPerWarp; ++i) {
      const int r = row_of(warp, i);
      if (r >= task.n_rows) break;
      // the keys this row sees in this tile: its window's start .. its own position, within the task's range
      const int32_t pos = s.pos0 + (task.row0 + r) / group;
      const int32_t begin = max(lo, first_visible_key(shape, pos)), end = min(hi, pos + 1);
      if (end <= begin) continue;
      const int32_t key = t0 + lane;
      float score = -INFINITY;
      if (key >= begin && key < end) {
        score = 0.0f;
        for (int d = 0; d < D; ++d) score += q_tile[r * D + d] * k_tile[lane * (D + 1) + d];
      }
      const float alpha = online_softmax_rescale(state[i], warp_max(score));
      const float p = online_softmax_weight(state[i], score);
      state[i].l += warp_sum(p);
      for (int e = 0; e < kPerLane; ++e) o[i][e] *= alpha;
      for (int32_t j = begin - t0; j < end - t0; ++j) {
        const float pj = __shfl_sync(kFullMask, p, j);
        for (int e = 0; e < kPerLane; ++e) {
          const int d = lane + 32 * e;
          if (d < D) o[i][e] += pj * v_tile[j * D + d];
        }
      }
    }
  }

  for (int i = 0; i < kRowsPerWarp; ++i) {
    const int r = row_of(warp, i);
    if (r >= task.n_rows) break;
    if (task.partial < 0) {
      // prefill: output = O / l
      const int32_t row = task.row0 + r;
      float* out = s.out + qo_offset(shape, row / group, task.kv_head * group + row % group);
      for (int e = 0; e < kPerLane; ++e) {
        if (lane + 32 * e < D) out[lane + 32 * e] = o[i][e] / state[i].l;
      }
      continue;
    }
    // decode: this split's (m, l, O) of the row, merged by merge_splits_kernel
    float* dst = partials + task.partial;
    if (lane == 0) {
      dst[r] = state[i].m;
      dst[task.n_rows + r] = state[i].l;
    }
    for (int e = 0; e < kPerLane; ++e) {
      if (lane + 32 * e < D) dst[2 * task.n_rows + r * D + lane + 32 * e] = o[i][e];
    }
  }
}

// One thread per (row, element): folds the row's split states in chunk order, then output = O / l.
__global__ void merge_splits_kernel(const DeviceAttentionSeq* seqs, const MergeTask* merges, const float* partials,
                                    DeviceAttentionShape shape) {
  const MergeTask task = merges[blockIdx.x];
  const DeviceAttentionSeq& s = seqs[task.seq];
  const int32_t hd = shape.head_dim, group = shape.n_heads / shape.n_kv_heads;
  const int64_t split_floats = partial_floats(task.n_rows, hd);
  for (int i = threadIdx.x; i < task.n_rows * hd; i += blockDim.x) {
    const int32_t r = i / hd, d = i % hd;
    OnlineSoftmax state;
    float o = 0.0f;
    for (int32_t c = 0; c < task.n_splits; ++c) {
      const float* split = partials + task.partial + c * split_floats;
      const MergeFactors f = online_softmax_merge(state, OnlineSoftmax{split[r], split[task.n_rows + r]});
      o = f.a * o + f.b * split[2 * task.n_rows + r * hd + d];
    }
    const int32_t row = task.row0 + r;
    s.out[qo_offset(shape, row / group, task.kv_head * group + row % group) + d] = o / state.l;
  }
}

// Above 48 KiB a kernel's dynamic shared memory must be opted into, once per device (the attribute is
// the device's), not at every launch.
template <int D, typename KvT, bool kWide>
void opt_into_shared_memory(size_t bytes) {
  static std::mutex mu;
  static std::set<int> devices;  // those opted in
  int device = 0;
  INFERSCOPE_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard lock(mu);
  if (devices.count(device) != 0) return;
  INFERSCOPE_CUDA_CHECK(cudaFuncSetAttribute(flash_tile_kernel<D, KvT, kWide>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(bytes)));
  devices.insert(device);
}

template <int D, typename KvT, bool kWide>
void launch_tiles(const AttentionPlan& plan, const DeviceSections& at, const DeviceAttentionShape& shape,
                  cudaStream_t stream) {
  constexpr size_t bytes = tile_shared_bytes<D>();
  opt_into_shared_memory<D, KvT, kWide>(bytes);
  flash_tile_kernel<D, KvT, kWide><<<plan.n_tasks, kThreads, bytes, stream>>>(
      at.seqs, static_cast<const TileTask*>(at.tasks), at.data, shape);
  INFERSCOPE_CUDA_CHECK_LAUNCH("flash_tile_kernel");
}

// The tile kernel instantiated for the shape's head_dim and KV dtype (attention_plan checked both).
template <bool kWide>
void launch_tiles_for_shape(const AttentionPlan& plan, const DeviceSections& at, const DeviceAttentionShape& shape,
                            Stream stream) {
  if (plan.n_tasks == 0) return;
  const auto cu_stream = static_cast<cudaStream_t>(stream);
  with_kv_type(shape.kv_dtype, [&]<typename KvT>() {
    switch (shape.head_dim) {
      case 8: launch_tiles<8, KvT, kWide>(plan, at, shape, cu_stream); break;
      case 64: launch_tiles<64, KvT, kWide>(plan, at, shape, cu_stream); break;
      case 128: launch_tiles<128, KvT, kWide>(plan, at, shape, cu_stream); break;
      default: launch_tiles<256, KvT, kWide>(plan, at, shape, cu_stream); break;
    }
  });
}

}  // namespace

void launch_flash(const AttentionPlan& plan, const DeviceSections& at, const DeviceAttentionShape& shape,
                  Stream stream) {
  launch_tiles_for_shape<false>(plan, at, shape, stream);
}

void launch_decode(const AttentionPlan& plan, const DeviceSections& at, const DeviceAttentionShape& shape,
                   Stream stream) {
  if (plan.schedule == AttentionSchedule::DecodeWide) launch_tiles_for_shape<true>(plan, at, shape, stream);
  else launch_tiles_for_shape<false>(plan, at, shape, stream);
  if (plan.n_merges == 0) return;
  merge_splits_kernel<<<plan.n_merges, 256, 0, static_cast<cudaStream_t>(stream)>>>(at.seqs, at.merges, at.data, shape);
  INFERSCOPE_CUDA_CHECK_LAUNCH("merge_splits_kernel");
}

}  // namespace inferscope::gpu
