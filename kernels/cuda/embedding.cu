// Embedding lookup: each thread decodes one element of a token's table row (any weight format). Tokens
// run along the grid's x dimension, whose 2^31 - 1 blocks no step reaches (y would cap a step at 65,535).
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/weight_formats.cuh"

namespace inferscope::gpu {
namespace {

constexpr int kThreads = 256;

template <typename Format>
__global__ void embedding_kernel(const uint8_t* table, size_t row_stride, int64_t cols, const int32_t* tokens,
                                 float* out) {
  const int64_t t = blockIdx.x;
  const int64_t i = static_cast<int64_t>(blockIdx.y) * kThreads + threadIdx.x;
  if (i >= cols) return;
  out[t * cols + i] = Format::element(table + static_cast<int64_t>(__ldg(tokens + t)) * row_stride, i);
}

}  // namespace

void embedding(const DeviceMatrix& table, const int32_t* tokens, int64_t n_tok, float* out, cudaStream_t stream) {
  if (table.cols % dtype_info(table.type).block_size != 0)
    throw std::invalid_argument("embedding: row of " + std::to_string(table.cols) + " is not whole blocks");
  if (n_tok == 0 || table.cols == 0) return;
  const dim3 grid(static_cast<unsigned>(n_tok), static_cast<unsigned>((table.cols + kThreads - 1) / kThreads));
  with_weight_format(table.type, "embedding", [&](auto format) {
    embedding_kernel<decltype(format)><<<grid, kThreads, 0, stream>>>(static_cast<const uint8_t*>(table.data),
                                                                      table.row_stride, table.cols, tokens, out);
    INFERSCOPE_CUDA_CHECK_LAUNCH("embedding_kernel");
  });
}

}  // namespace inferscope::gpu
