// Butterfly sums over a warp with __shfl_xor_sync: every lane ends with the total, always added in the
// same order (so a sum never depends on what else the kernel computed).
#pragma once

namespace inferscope::gpu {

constexpr int kWarpSize = 32;

template <typename T>
__device__ inline T warp_sum(T v) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

}  // namespace inferscope::gpu
