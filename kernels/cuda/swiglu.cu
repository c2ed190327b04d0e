// SwiGLU, one element per thread (ops_element.h's swiglu_value).
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/ops_element.h"

namespace inferscope::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void swiglu_kernel(float* gate, const float* up, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) gate[i] = swiglu_value(gate[i], up[i]);
}

}  // namespace

void swiglu(float* gate, const float* up, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  swiglu_kernel<<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(gate, up, n);
  INFERSCOPE_CUDA_CHECK_LAUNCH("swiglu_kernel");
}

}  // namespace inferscope::gpu
