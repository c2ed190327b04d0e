// Decode GEMV over stored weight blocks, in two layouts (GemvKernel). WarpRows: each warp owns
// kLoadRows rows, each lane walks the rows' groups of 8 elements (weight_formats.cuh) lane-strided,
// decodes them in registers and multiplies them with every token's activations (two 16-byte loads per
// group and token), so the weights are read once per call and each activation load serves
// kLoadRows rows. Each output is one lane-wise sum in group order followed by a fixed butterfly over
// the warp: the same for any token count. SplitK: a block's kSplitWarps warps share kLoadRows rows,
// its threads striding the groups block-wide, each warp's butterfly sum then added in warp order.
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/warp_reduce.cuh"
#include "kernels/cuda/weight_formats.cuh"

namespace inferscope::gpu {
namespace {

constexpr int kWarpsPerBlock = 4;  // WarpRows: warps per block, each with its own rows
constexpr int kSplitWarps = 4;     // SplitK: warps per block, sharing its rows
constexpr int kLoadRows = 2;       // rows sharing each activation load: a warp's (WarpRows), a block's (SplitK)

// The activations of one group: columns c0..c0+3 and c1..c1+3 (every format's group is two such runs),
// as two 16-byte loads when both runs are aligned.
__device__ inline void load_activation_group(const float* xt, int64_t c0, int64_t c1, float (&xv)[kGroup]) {
  const float* p0 = xt + c0;
  const float* p1 = xt + c1;
  if (((reinterpret_cast<uintptr_t>(p0) | reinterpret_cast<uintptr_t>(p1)) & 15) == 0) {
    const float4 a = __ldg(reinterpret_cast<const float4*>(p0)), b = __ldg(reinterpret_cast<const float4*>(p1));
    const float v[kGroup] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
    for (int k = 0; k < kGroup; ++k) xv[k] = v[k];
  } else {
#pragma unroll
    for (int k = 0; k < kGroup / 2; ++k) {
      xv[k] = __ldg(p0 + k);
      xv[kGroup / 2 + k] = __ldg(p1 + k);
    }
  }
}

// Adds to acc the products of kLoadRows rows from row0 (the first n_rows of them real) with every
// token's activations: groups first_group, first_group + group_step, ... in that order, then, where a
// row ends in a partial group (F32/F16), its element n_groups * kGroup + tail (tail < 0: none).
template <typename Format, int N>
__device__ inline void add_products(const uint8_t* w, size_t row_stride, int64_t row0, int n_rows, int64_t cols,
                                    const float* __restrict__ x, int64_t first_group, int group_step, int tail,
                                    float (&acc)[kLoadRows][N]) {
  const int64_t n_groups = cols / kGroup;
  // unrolled so that several groups' loads are in flight at once (the sums keep their order)
#pragma unroll 4
  for (int64_t g = first_group; g < n_groups; g += group_step) {
    // every loop below has a constant trip count and is unrolled, so the arrays stay in registers
    float wv[kLoadRows][kGroup] = {};
#pragma unroll
    for (int r = 0; r < kLoadRows; ++r)
      if (r < n_rows) Format::load_group(w + (row0 + r) * row_stride, g, wv[r]);
#pragma unroll
    for (int t = 0; t < N; ++t) {
      float xv[kGroup];
      load_activation_group(x + t * cols, Format::column(g, 0), Format::column(g, kGroup / 2), xv);
#pragma unroll
      for (int k = 0; k < kGroup; ++k) {
#pragma unroll
        for (int r = 0; r < kLoadRows; ++r) acc[r][t] = fmaf(wv[r][k], xv[k], acc[r][t]);
      }
    }
  }
  const int64_t c = n_groups * kGroup + tail;
  if (tail >= 0 && c < cols) {
#pragma unroll
    for (int r = 0; r < kLoadRows; ++r) {
      const float wv = r < n_rows ? Format::element(w + (row0 + r) * row_stride, c) : 0.0f;
#pragma unroll
      for (int t = 0; t < N; ++t) acc[r][t] = fmaf(wv, __ldg(x + t * cols + c), acc[r][t]);
    }
  }
}

template <typename Format, int N>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarpSize)
    gemv_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int64_t cols, const float* __restrict__ x,
                float* __restrict__ y) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int64_t row0 = (static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize) * kLoadRows;
  if (row0 >= rows) return;
  const int n_rows = static_cast<int>(rows - row0 < kLoadRows ? rows - row0 : kLoadRows);  // warp-uniform
  float acc[kLoadRows][N] = {};
  // lane l takes groups l, l + 32, ..., and element l of a partial group
  add_products<Format, N>(w, row_stride, row0, n_rows, cols, x, lane, kWarpSize, lane, acc);
  store_warp_sums(acc, lane, n_rows, rows, row0, y);
}

template <typename Format, int N>
__global__ void __launch_bounds__(kSplitWarps* kWarpSize)
    gemv_split_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int64_t cols, const float* __restrict__ x,
                      float* __restrict__ y) {
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / kWarpSize, lane = tid % kWarpSize;
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kLoadRows;
  const int n_rows = static_cast<int>(rows - row0 < kLoadRows ? rows - row0 : kLoadRows);  // block-uniform
  float acc[kLoadRows][N] = {};
  // thread tid takes groups tid, tid + 128, ... (a pass's loads lie side by side); warp 0's lane l
  // takes element l of a partial group
  add_products<Format, N>(w, row_stride, row0, n_rows, cols, x, tid, kSplitWarps * kWarpSize, warp == 0 ? lane : -1, acc);
  // each warp's butterfly sum, then the warps' sums added in warp order
  __shared__ float warp_sums[kSplitWarps][kLoadRows][N];
#pragma unroll
  for (int r = 0; r < kLoadRows; ++r) {
#pragma unroll
    for (int t = 0; t < N; ++t) {
      const float sum = warp_sum(acc[r][t]);
      if (lane == 0) warp_sums[warp][r][t] = sum;
    }
  }
  __syncthreads();
  if (tid < kLoadRows * N) {
    const int r = tid / N, t = tid % N;
    if (r < n_rows) {
      float sum = warp_sums[0][r][t];
#pragma unroll
      for (int k = 1; k < kSplitWarps; ++k) sum += warp_sums[k][r][t];
      y[t * rows + row0 + r] = sum;
    }
  }
}

template <typename Format, int N>
void launch_gemv(GemvKernel kernel, const DeviceMatrix& w, const float* x, float* y, cudaStream_t stream) {
  const auto* weights = static_cast<const uint8_t*>(w.data);
  if (kernel == GemvKernel::SplitK) {
    const auto blocks = static_cast<unsigned>((w.rows + kLoadRows - 1) / kLoadRows);
    gemv_split_kernel<Format, N><<<blocks, kSplitWarps * kWarpSize, 0, stream>>>(weights, w.row_stride, w.rows, w.cols, x, y);
    INFERSCOPE_CUDA_CHECK_LAUNCH("gemv_split_kernel");
    return;
  }
  const int64_t rows_per_block = kWarpsPerBlock * kLoadRows;
  const auto blocks = static_cast<unsigned>((w.rows + rows_per_block - 1) / rows_per_block);
  gemv_kernel<Format, N><<<blocks, kWarpsPerBlock * kWarpSize, 0, stream>>>(weights, w.row_stride, w.rows, w.cols, x, y);
  INFERSCOPE_CUDA_CHECK_LAUNCH("gemv_kernel");
}

// launch_gemv<Format, n_tok> for the run-time n_tok: one instantiation per token count.
template <typename Format, int N = 1>
void launch_gemv_for_tokens(int64_t n_tok, GemvKernel kernel, const DeviceMatrix& w, const float* x, float* y,
                            cudaStream_t stream) {
  if constexpr (N <= kGemvMaxTokens) {
    if (n_tok == N) return launch_gemv<Format, N>(kernel, w, x, y, stream);
    launch_gemv_for_tokens<Format, N + 1>(n_tok, kernel, w, x, y, stream);
  }
}

}  // namespace

void gemv(const DeviceMatrix& w, const float* x, int64_t n_tok, float* y, cudaStream_t stream, GemvKernel kernel) {
  if (n_tok < 1 || n_tok > kGemvMaxTokens)
    throw std::invalid_argument("gemv: n_tok must be 1.." + std::to_string(kGemvMaxTokens) + ", got " + std::to_string(n_tok));
  if (w.cols % dtype_info(w.type).block_size != 0)
    throw std::invalid_argument("gemv: " + std::to_string(w.cols) + " columns is not whole blocks of " +
                                std::string(dtype_name(w.type)));
  if (w.rows == 0) return;
  with_weight_format(w.type, "gemv", [&](auto format) {
    launch_gemv_for_tokens<decltype(format)>(n_tok, kernel, w, x, y, stream);
  });
}

}  // namespace inferscope::gpu
