// K/V rows into a KV cache's device pools: one block per (token, KV head, K or V), one thread per
// element (kv_store_element.h's f32_to_f16 for an f16 cache).
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/kv_store_element.h"
#include "kernels/cuda/ops.h"

namespace inferscope::gpu {
namespace {

__global__ void kv_store_kernel(const float* k, const float* v, uint8_t* const* k_rows, uint8_t* const* v_rows,
                                int64_t n_kv_heads, int64_t head_dim, size_t head_stride, bool f16) {
  const int64_t t = blockIdx.x, h = blockIdx.y;
  const bool is_v = blockIdx.z == 1;
  const float* src = (is_v ? v : k) + (t * n_kv_heads + h) * head_dim;
  uint8_t* dst = (is_v ? v_rows : k_rows)[t] + h * head_stride;
  for (int64_t i = threadIdx.x; i < head_dim; i += blockDim.x) {
    if (f16) {
      reinterpret_cast<f16_bits*>(dst)[i] = f32_to_f16(__float_as_uint(src[i]));
    } else {
      reinterpret_cast<float*>(dst)[i] = src[i];
    }
  }
}

}  // namespace

void kv_store(const float* k, const float* v, uint8_t* const* k_rows, uint8_t* const* v_rows, int64_t n_tok,
              int64_t n_kv_heads, int64_t head_dim, size_t head_stride, DType dtype, cudaStream_t stream) {
  if (dtype != DType::F16 && dtype != DType::F32) {
    throw std::invalid_argument("kv_store: the CUDA KV store writes f16 or f32, not " + std::string(dtype_name(dtype)));
  }
  if (n_tok == 0) return;
  const dim3 grid(static_cast<unsigned>(n_tok), static_cast<unsigned>(n_kv_heads), 2);
  const unsigned threads = static_cast<unsigned>(head_dim < 256 ? head_dim : 256);
  kv_store_kernel<<<grid, threads, 0, stream>>>(k, v, k_rows, v_rows, n_kv_heads, head_dim, head_stride,
                                                dtype == DType::F16);
  INFERSCOPE_CUDA_CHECK_LAUNCH("kv_store_kernel");
}

}  // namespace inferscope::gpu
