// Weights to f16 for the cuBLAS GEMM: each thread decodes one group of 8 elements of a row with the
// GEMV's loads (weight_formats.cuh, dequant_element.h) and rounds them to half; an F32/F16 row's
// partial last group is one thread per element.
#include <cuda_fp16.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/weight_formats.cuh"

namespace inferscope::gpu {
namespace {

constexpr int kThreads = 256;

// Unit u of a row: a whole group for u < n_groups, then the tail's elements one by one.
template <typename Format>
__global__ void dequantize_f16_kernel(const uint8_t* w, size_t row_stride, int64_t cols, int64_t units_per_row,
                                      int64_t n_units, __half* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n_units) return;
  const int64_t r = i / units_per_row, u = i % units_per_row, n_groups = cols / kGroup;
  const uint8_t* row = w + r * row_stride;
  __half* out_row = out + r * cols;
  if (u < n_groups) {
    float v[kGroup];
    Format::load_group(row, u, v);
#pragma unroll
    for (int k = 0; k < kGroup; ++k) out_row[Format::column(u, k)] = __float2half_rn(v[k]);
    return;
  }
  const int64_t c = n_groups * kGroup + (u - n_groups);
  out_row[c] = __float2half_rn(Format::element(row, c));
}

}  // namespace

void dequantize_f16(const DeviceMatrix& w, uint16_t* out, cudaStream_t stream) {
  if (w.cols % dtype_info(w.type).block_size != 0)
    throw std::invalid_argument("dequantize_f16: " + std::to_string(w.cols) + " columns is not whole blocks of " +
                                std::string(dtype_name(w.type)));
  const int64_t units_per_row = w.cols / kGroup + w.cols % kGroup, n_units = w.rows * units_per_row;
  if (n_units == 0) return;
  const auto blocks = static_cast<unsigned>((n_units + kThreads - 1) / kThreads);
  with_weight_format(w.type, "dequantize_f16", [&](auto format) {
    dequantize_f16_kernel<decltype(format)><<<blocks, kThreads, 0, stream>>>(
        static_cast<const uint8_t*>(w.data), w.row_stride, w.cols, units_per_row, n_units, reinterpret_cast<__half*>(out));
    INFERSCOPE_CUDA_CHECK_LAUNCH("dequantize_f16_kernel");
  });
}

}  // namespace inferscope::gpu
