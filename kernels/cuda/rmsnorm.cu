// Fused residual add + RMSNorm: one block per token row; the sum of squares is taken in double, as the
// CPU's rmsnorm does, then each element is scaled by ops_element.h's formulas.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/ops_element.h"
#include "kernels/cuda/warp_reduce.cuh"

namespace inferscope::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void add_rmsnorm_kernel(float* residual, const float* delta, const float* weight, float* out, int64_t n,
                                   float eps) {
  __shared__ double warp_sums[kThreads / kWarpSize];
  float* x = residual + blockIdx.x * n;
  double sum_sq = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    float v = x[i];
    if (delta != nullptr) {
      v += delta[blockIdx.x * n + i];
      x[i] = v;
    }
    sum_sq += static_cast<double>(v) * v;
  }
  sum_sq = warp_sum(sum_sq);
  if (threadIdx.x % kWarpSize == 0) warp_sums[threadIdx.x / kWarpSize] = sum_sq;
  __syncthreads();
  double total = 0.0;
  for (int w = 0; w < kThreads / kWarpSize; ++w) total += warp_sums[w];
  const float scale = rmsnorm_scale(total, n, eps);
  // each thread rereads only the elements it wrote itself
  for (int64_t i = threadIdx.x; i < n; i += kThreads) out[blockIdx.x * n + i] = rmsnorm_value(x[i], scale, weight[i]);
}

}  // namespace

void add_rmsnorm(float* residual, const float* delta, const float* weight, float* out, int64_t n_tok, int64_t n,
                 float eps, cudaStream_t stream) {
  if (n_tok == 0 || n == 0) return;
  add_rmsnorm_kernel<<<static_cast<unsigned>(n_tok), kThreads, 0, stream>>>(residual, delta, weight, out, n, eps);
  INFERSCOPE_CUDA_CHECK_LAUNCH("add_rmsnorm_kernel");
}

}  // namespace inferscope::gpu
