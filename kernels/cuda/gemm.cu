// The prefill GEMM: weights to f16 (dequantize_f16, or the F16 rows where they lie), activations
// rounded to f16, then cublasGemmEx with f32 accumulation (CUBLAS_COMPUTE_32F) writing f32 outputs.
// Row-major Y (n_tok x rows) = X (n_tok x cols) Wᵀ is, in cuBLAS's column-major terms,
// Y' (rows x n_tok) = op_T(W' (cols x rows)) X' (cols x n_tok): no transposed copies.
#include <cuda_fp16.h>

#include <climits>
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gemm.h"

namespace inferscope::gpu {
namespace {

constexpr int kThreads = 256;
constexpr size_t kAlign = 256;  // scratch sections start at multiples of this (tensor-core friendly)

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// F16 weights need no copy when their row stride is whole halves (cuBLAS takes it as the leading dimension).
bool reads_in_place(const DeviceMatrix& w) { return w.type == DType::F16 && w.row_stride % sizeof(__half) == 0; }

size_t weight_section_bytes(const DeviceMatrix& w) {
  return reads_in_place(w) ? 0 : align_up(static_cast<size_t>(w.rows * w.cols) * sizeof(__half));
}

__global__ void to_f16_kernel(const float* x, int64_t n, __half* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) out[i] = __float2half_rn(x[i]);
}

int as_int(int64_t n, const char* what) {
  if (n > INT_MAX) throw std::invalid_argument(std::string("gemm: ") + what + " " + std::to_string(n) + " exceeds cuBLAS's int");
  return static_cast<int>(n);
}

}  // namespace

size_t gemm_scratch_bytes(const DeviceMatrix& w, int64_t n_tok) {
  return weight_section_bytes(w) + static_cast<size_t>(n_tok * w.cols) * sizeof(__half);
}

void gemm(const CublasHandle& handle, const DeviceMatrix& w, const float* x, int64_t n_tok, float* y, void* scratch,
          size_t scratch_bytes, cudaStream_t stream) {
  if (n_tok < 1) throw std::invalid_argument("gemm: n_tok must be at least 1, got " + std::to_string(n_tok));
  if (!weight_type_supported(w.type))
    throw std::invalid_argument("gemm: CUDA does not read " + std::string(dtype_name(w.type)) + " weights");
  const size_t needed = gemm_scratch_bytes(w, n_tok);
  if (scratch_bytes < needed) {
    throw std::invalid_argument("gemm: scratch of " + std::to_string(scratch_bytes) + " bytes, " + std::to_string(needed) +
                                " needed");
  }
  if (w.rows == 0) return;
  const int m = as_int(w.rows, "rows"), n = as_int(n_tok, "tokens"), k = as_int(w.cols, "columns");
  auto* base = static_cast<uint8_t*>(scratch);
  // the weights in f16: where they lie (leading dimension = the row stride in halves) or decoded into the scratch
  const void* w16 = w.data;
  int lda = k;
  if (reads_in_place(w)) {
    lda = as_int(static_cast<int64_t>(w.row_stride / sizeof(__half)), "row stride");
  } else {
    dequantize_f16(w, reinterpret_cast<uint16_t*>(base), stream);
    w16 = base;
  }
  auto* x16 = reinterpret_cast<__half*>(base + weight_section_bytes(w));
  const int64_t n_x = n_tok * w.cols;
  to_f16_kernel<<<static_cast<unsigned>((n_x + kThreads - 1) / kThreads), kThreads, 0, stream>>>(x, n_x, x16);
  INFERSCOPE_CUDA_CHECK_LAUNCH("to_f16_kernel");
  const float alpha = 1.0f, beta = 0.0f;
  INFERSCOPE_CUBLAS_CHECK(cublasSetStream(handle.get(), stream));
  INFERSCOPE_CUBLAS_CHECK(cublasGemmEx(handle.get(), CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, w16, CUDA_R_16F, lda, x16,
                                       CUDA_R_16F, k, &beta, y, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace inferscope::gpu
