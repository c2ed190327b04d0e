// Argmax per logits row: one block per row; each thread scans a strided share, then warps and the
// block combine candidates with argmax_prefers, a total order, so the answer is the CPU scan's.
#include <stdexcept>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/ops_element.h"
#include "kernels/cuda/warp_reduce.cuh"

namespace inferscope::gpu {
namespace {

constexpr int kThreads = 256;

struct Candidate {
  float value;
  int64_t index;
};

__device__ Candidate better(Candidate a, Candidate b) { return argmax_prefers(a.value, a.index, b.value, b.index) ? a : b; }

__device__ Candidate warp_best(Candidate c) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    const Candidate other{__shfl_xor_sync(0xffffffffu, c.value, offset), __shfl_xor_sync(0xffffffffu, c.index, offset)};
    c = better(c, other);
  }
  return c;
}

__global__ void argmax_kernel(const float* logits, int64_t n, int32_t* best) {
  __shared__ Candidate warp_bests[kThreads / kWarpSize];
  const float* row = logits + blockIdx.x * n;
  // a NaN at index -1 loses to every real candidate
  Candidate c{__int_as_float(0x7fc00000), -1};
  for (int64_t i = threadIdx.x; i < n; i += kThreads) c = better(c, Candidate{row[i], i});
  c = warp_best(c);
  if (threadIdx.x % kWarpSize == 0) warp_bests[threadIdx.x / kWarpSize] = c;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int w = 1; w < kThreads / kWarpSize; ++w) c = better(c, warp_bests[w]);
  best[blockIdx.x] = static_cast<int32_t>(c.index);
}

}  // namespace

void argmax(const float* logits, int64_t n_tok, int64_t n, int32_t* best, cudaStream_t stream) {
  if (n <= 0) throw std::invalid_argument("argmax: empty logits");
  if (n_tok == 0) return;
  argmax_kernel<<<static_cast<unsigned>(n_tok), kThreads, 0, stream>>>(logits, n, best);
  INFERSCOPE_CUDA_CHECK_LAUNCH("argmax_kernel");
}

}  // namespace inferscope::gpu
