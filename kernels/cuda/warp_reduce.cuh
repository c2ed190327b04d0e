// Butterfly sums over a warp with __shfl_xor_sync: every lane ends with the total, always added in the
// same order (so a sum never depends on what else the kernel computed).
#pragma once
#include <cstdint>

namespace inferscope::gpu {

constexpr int kWarpSize = 32;

template <typename T>
__device__ inline T warp_sum(T v) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// A GEMV warp's outputs: the butterfly sum of each (row, token) accumulator, written by lane 0 to
// y[t * rows + row0 + r] for the warp's n_rows real rows.
template <int R, int N>
__device__ inline void store_warp_sums(const float (&acc)[R][N], int lane, int n_rows, int64_t rows, int64_t row0,
                                       float* y) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int t = 0; t < N; ++t) {
      const float sum = warp_sum(acc[r][t]);
      if (lane == 0 && r < n_rows) y[t * rows + row0 + r] = sum;
    }
  }
}

}  // namespace inferscope::gpu
