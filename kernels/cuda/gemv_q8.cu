// Decode GEMV with int8 activations (q8_dot_element.h): each warp owns kLoadRows rows and each lane
// takes whole 32-element blocks, lane-strided (block l, l + 32, ...). A lane reads a weight block's
// codes as eight words of byte codes, each token's activation block in two 16-byte loads and one
// 4-byte scale, multiplies them with eight dp4a, and adds the block's one float product to its sum in
// block order; a fixed butterfly over the warp gives each output. No output depends on the token count.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/dequant_element.h"
#include "kernels/cuda/kv_store_element.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/q8_dot_element.h"
#include "kernels/cuda/warp_reduce.cuh"
#include "kernels/cuda/weight_formats.cuh"

namespace inferscope::gpu {
namespace {

constexpr int kWarpsPerBlock = 4;  // warps per thread block, each with its own rows
constexpr int kLoadRows = 2;       // rows per warp, sharing each activation load

// One weight block as the dot needs it: its codes in the activations' element order, d and m.
struct WeightBlock {
  int32_t codes[kQ8Words];
  float d, m;
};

// Q8_0 (34-byte blocks, 2-byte aligned): sixteen u16 loads.
struct Q8_0Codes {
  __device__ static void load(const uint8_t* row, int64_t b, WeightBlock& w) {
    const BlockQ8_0* block = reinterpret_cast<const BlockQ8_0*>(row) + b;
    w.d = f16_to_f32(__ldg(&block->d));
    w.m = 0.0f;
    const auto* qs = reinterpret_cast<const uint8_t*>(block->qs);
#pragma unroll
    for (int k = 0; k < kQ8Words; ++k) w.codes[k] = static_cast<int32_t>(load_u32_from_u16(qs + 4 * k));
  }
  __device__ static float product(const WeightBlock& w, int dot, float dx, int) { return q8_0_q8_block(w.d, dx, dot); }
};

// Q4_0 (18-byte blocks, 2-byte aligned: u16 loads) and Q4_1 (20 bytes, 4-byte aligned: u32 loads).
template <typename Block>
struct Q4Codes {
  static constexpr bool kHasMin = std::is_same_v<Block, BlockQ4_1>;
  __device__ static void load(const uint8_t* row, int64_t b, WeightBlock& w) {
    const Block* block = reinterpret_cast<const Block*>(row) + b;
    w.d = f16_to_f32(__ldg(&block->d));
    uint32_t packed[4];
    if constexpr (kHasMin) {
      w.m = f16_to_f32(__ldg(&block->m));
#pragma unroll
      for (int k = 0; k < 4; ++k) packed[k] = __ldg(reinterpret_cast<const uint32_t*>(block->qs) + k);
    } else {
      w.m = 0.0f;
#pragma unroll
      for (int k = 0; k < 4; ++k) packed[k] = load_u32_from_u16(block->qs + 4 * k);
    }
    q4_code_words(packed, w.codes);
  }
  __device__ static float product(const WeightBlock& w, int dot, float dx, int sum) {
    if constexpr (kHasMin) return q4_1_q8_block(w.d, w.m, dx, dot, sum);
    else return q4_0_q8_block(w.d, dx, dot, sum);
  }
};

// One warp per activation block (lane j takes element j): the warp's absolute maximum, then codes and
// their sum as kernels/cpu quantizes Q8_1 (q8_dot_element.h).
__global__ void __launch_bounds__(kWarpsPerBlock* kWarpSize)
    quantize_q8_kernel(const float* __restrict__ x, int64_t n_blocks, int8_t* __restrict__ codes,
                       Q8BlockScale* __restrict__ scales) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize;
  if (b >= n_blocks) return;  // warp-uniform
  const float v = x[b * kQ8Block + lane];
  float amax = fabsf(v);
  // the maximum is the same whatever the order
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
  const float d = amax / 127.0f;
  const int q = q8_code(v, d != 0.0f ? 1.0f / d : 0.0f);
  codes[b * kQ8Block + lane] = static_cast<int8_t>(q);
  const int sum = warp_sum(q);  // integers: exact
  if (lane == 0) scales[b] = Q8BlockScale{f32_to_f16(__float_as_uint(d)), static_cast<int16_t>(sum)};
}

template <typename Format, int N>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarpSize)
    gemv_q8_kernel(const uint8_t* w, size_t row_stride, int64_t rows, int64_t cols, const int8_t* __restrict__ codes,
                   const Q8BlockScale* __restrict__ scales, float* __restrict__ y) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int64_t row0 = (static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize) * kLoadRows;
  if (row0 >= rows) return;
  const int n_rows = static_cast<int>(rows - row0 < kLoadRows ? rows - row0 : kLoadRows);  // warp-uniform
  const int64_t n_blocks = cols / kQ8Block;
  float acc[kLoadRows][N] = {};
  // two blocks' loads in flight at once (each lane's sums keep their order)
#pragma unroll 2
  for (int64_t b = lane; b < n_blocks; b += kWarpSize) {
    WeightBlock wb[kLoadRows] = {};
#pragma unroll
    for (int r = 0; r < kLoadRows; ++r)
      if (r < n_rows) Format::load(w + (row0 + r) * row_stride, b, wb[r]);
#pragma unroll
    for (int t = 0; t < N; ++t) {
      // the block's 32 codes, 32-byte aligned: two 16-byte loads
      const auto* at = reinterpret_cast<const int4*>(codes + t * cols + b * kQ8Block);
      const int4 lo = __ldg(at), hi = __ldg(at + 1);
      const int32_t x[kQ8Words] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
      const Q8BlockScale s = scales[t * n_blocks + b];
      const float dx = f16_to_f32(s.d);
#pragma unroll
      for (int r = 0; r < kLoadRows; ++r) acc[r][t] += Format::product(wb[r], block_dot(wb[r].codes, x), dx, s.sum);
    }
  }
  store_warp_sums(acc, lane, n_rows, rows, row0, y);
}

template <typename Format, int N = 1>
void launch_gemv_q8(int64_t n_tok, const DeviceMatrix& w, const int8_t* codes, const Q8BlockScale* scales, float* y,
                    cudaStream_t stream) {
  if constexpr (N <= kGemvMaxTokens) {
    if (n_tok != N) return launch_gemv_q8<Format, N + 1>(n_tok, w, codes, scales, y, stream);
    const int64_t rows_per_block = kWarpsPerBlock * kLoadRows;
    const auto blocks = static_cast<unsigned>((w.rows + rows_per_block - 1) / rows_per_block);
    gemv_q8_kernel<Format, N><<<blocks, kWarpsPerBlock * kWarpSize, 0, stream>>>(
        static_cast<const uint8_t*>(w.data), w.row_stride, w.rows, w.cols, codes, scales, y);
    INFERSCOPE_CUDA_CHECK_LAUNCH("gemv_q8_kernel");
  }
}

void check_q8_shape(const char* op, int64_t n_tok, int64_t cols) {
  if (n_tok < 1 || n_tok > kGemvMaxTokens)
    throw std::invalid_argument(std::string(op) + ": n_tok must be 1.." + std::to_string(kGemvMaxTokens) + ", got " +
                                std::to_string(n_tok));
  if (cols <= 0 || cols % kQ8Block != 0)
    throw std::invalid_argument(std::string(op) + ": " + std::to_string(cols) + " columns is not whole blocks of " +
                                std::to_string(kQ8Block));
}

}  // namespace

bool gemv_q8_supported(DType type) { return type == DType::Q8_0 || type == DType::Q4_0 || type == DType::Q4_1; }

void quantize_q8_activations(const float* x, int64_t n_tok, int64_t cols, void* xq, cudaStream_t stream) {
  check_q8_shape("quantize_q8_activations", n_tok, cols);
  const int64_t n_blocks = n_tok * cols / kQ8Block;
  auto* codes = static_cast<int8_t*>(xq);
  const auto blocks = static_cast<unsigned>((n_blocks + kWarpsPerBlock - 1) / kWarpsPerBlock);
  quantize_q8_kernel<<<blocks, kWarpsPerBlock * kWarpSize, 0, stream>>>(
      x, n_blocks, codes, reinterpret_cast<Q8BlockScale*>(codes + n_tok * cols));
  INFERSCOPE_CUDA_CHECK_LAUNCH("quantize_q8_kernel");
}

void gemv_q8(const DeviceMatrix& w, const void* xq, int64_t n_tok, float* y, cudaStream_t stream) {
  check_q8_shape("gemv_q8", n_tok, w.cols);
  if (!gemv_q8_supported(w.type))
    throw std::invalid_argument("gemv_q8: int8 activations meet Q8_0, Q4_0 and Q4_1 weights, not " +
                                std::string(dtype_name(w.type)));
  // the 16-byte activation loads, and Q4_1's 4-byte code loads (its 20-byte blocks), need their alignment
  if (reinterpret_cast<uintptr_t>(xq) % 16 != 0)
    throw std::invalid_argument("gemv_q8: the quantized activations must be 16-byte aligned");
  if (w.type == DType::Q4_1 && (reinterpret_cast<uintptr_t>(w.data) | w.row_stride) % 4 != 0)
    throw std::invalid_argument("gemv_q8: Q4_1 weights and their row stride must be 4-byte aligned");
  if (w.rows == 0) return;
  const auto* codes = static_cast<const int8_t*>(xq);
  const auto* scales = reinterpret_cast<const Q8BlockScale*>(codes + n_tok * w.cols);
  switch (w.type) {
    case DType::Q8_0: return launch_gemv_q8<Q8_0Codes>(n_tok, w, codes, scales, y, stream);
    case DType::Q4_0: return launch_gemv_q8<Q4Codes<BlockQ4_0>>(n_tok, w, codes, scales, y, stream);
    default: return launch_gemv_q8<Q4Codes<BlockQ4_1>>(n_tok, w, codes, scales, y, stream);
  }
}

}  // namespace inferscope::gpu
