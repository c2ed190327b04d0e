// What the int8-activation GEMV (kernels/cuda/gemv_q8.cu) computes, in plain C++ and in the kernel's
// order: the activations quantized by kernels/cpu's Q8_1 quantizer (its codes and half d, the codes'
// sum as an integer), each of a warp's 32 lanes summing its blocks (l, l + 32, ...) in order with
// q8_dot_element.h's maths, then the warp's butterfly (warp_reduce.cuh). The GPU's outputs equal
// these bit for bit.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/matmul/matmul.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cuda/dequant_element.h"
#include "kernels/cuda/q8_dot_element.h"
#include "kernels/format/dtype.h"
#include "kernels/format/quant_blocks.h"

namespace inferscope::test {

// n_tok rows of cols activations as gpu::quantize_q8_activations lays them out.
struct Q8Rows {
  int64_t n_tok = 0, cols = 0;
  std::vector<int8_t> codes;                   // n_tok x cols
  std::vector<gpu::Q8BlockScale> scales;       // n_tok x cols / 32

  // The device layout: every token's codes, then every token's scales.
  std::vector<uint8_t> bytes() const {
    std::vector<uint8_t> out(gpu::q8_activation_bytes(n_tok, cols));
    std::memcpy(out.data(), codes.data(), codes.size());
    std::memcpy(out.data() + codes.size(), scales.data(), scales.size() * sizeof(gpu::Q8BlockScale));
    return out;
  }
};

inline Q8Rows quantize_q8_rows(const float* x, int64_t n_tok, int64_t cols) {
  const int64_t n_blocks = cols / gpu::kQ8Block;
  Q8Rows q{n_tok, cols, std::vector<int8_t>(static_cast<size_t>(n_tok * cols)),
           std::vector<gpu::Q8BlockScale>(static_cast<size_t>(n_tok * n_blocks))};
  std::vector<BlockQ8_1> blocks(static_cast<size_t>(n_blocks));
  for (int64_t t = 0; t < n_tok; ++t) {
    quantize_row(DType::Q8_1, x + t * cols, blocks.data(), cols);
    for (int64_t b = 0; b < n_blocks; ++b) {
      int sum = 0;
      for (int j = 0; j < gpu::kQ8Block; ++j) {
        q.codes[t * cols + b * gpu::kQ8Block + j] = blocks[b].qs[j];
        sum += blocks[b].qs[j];
      }
      q.scales[t * n_blocks + b] = gpu::Q8BlockScale{blocks[b].d, static_cast<int16_t>(sum)};
    }
  }
  return q;
}

// Block b of a Q8_0, Q4_0 or Q4_1 row against activation block b of token t.
inline float q8_block_product(DType type, const uint8_t* row, const Q8Rows& xq, int64_t t, int64_t b) {
  int32_t x[gpu::kQ8Words], w[gpu::kQ8Words];
  std::memcpy(x, xq.codes.data() + t * xq.cols + b * gpu::kQ8Block, sizeof x);
  const gpu::Q8BlockScale s = xq.scales[t * (xq.cols / gpu::kQ8Block) + b];
  const float dx = gpu::f16_to_f32(s.d);
  if (type == DType::Q8_0) {
    const auto& block = reinterpret_cast<const BlockQ8_0*>(row)[b];
    std::memcpy(w, block.qs, sizeof w);
    return gpu::q8_0_q8_block(gpu::f16_to_f32(block.d), dx, gpu::block_dot(w, x));
  }
  uint32_t packed[4];
  if (type == DType::Q4_0) {
    const auto& block = reinterpret_cast<const BlockQ4_0*>(row)[b];
    std::memcpy(packed, block.qs, sizeof packed);
    gpu::q4_code_words(packed, w);
    return gpu::q4_0_q8_block(gpu::f16_to_f32(block.d), dx, gpu::block_dot(w, x), s.sum);
  }
  const auto& block = reinterpret_cast<const BlockQ4_1*>(row)[b];
  std::memcpy(packed, block.qs, sizeof packed);
  gpu::q4_code_words(packed, w);
  return gpu::q4_1_q8_block(gpu::f16_to_f32(block.d), gpu::f16_to_f32(block.m), dx, gpu::block_dot(w, x), s.sum);
}

// Y (n_tok rows of w.rows) as gemv_q8 computes it.
inline std::vector<float> gemv_q8_reference(const MatrixRef& w, const Q8Rows& xq) {
  constexpr int kLanes = 32;
  const int64_t n_blocks = w.cols / gpu::kQ8Block;
  std::vector<float> y(static_cast<size_t>(xq.n_tok * w.rows));
  for (int64_t t = 0; t < xq.n_tok; ++t) {
    for (int64_t r = 0; r < w.rows; ++r) {
      const auto* row = static_cast<const uint8_t*>(w.data) + r * w.row_stride;
      std::array<float, kLanes> lane{};
      for (int64_t b = 0; b < n_blocks; ++b) lane[b % kLanes] += q8_block_product(w.type, row, xq, t, b);
      // the butterfly: every lane adds the lane `offset` away, for offsets 16, 8, 4, 2, 1
      for (int offset = kLanes / 2; offset > 0; offset /= 2) {
        std::array<float, kLanes> next{};
        for (int l = 0; l < kLanes; ++l) next[l] = lane[l] + lane[l ^ offset];
        lane = next;
      }
      y[t * w.rows + r] = lane[0];
    }
  }
  return y;
}

}  // namespace inferscope::test
