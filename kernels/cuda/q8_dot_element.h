// The int8-activation GEMV's element maths (gemv_q8.cu), shared with the CPU tests that pin it to
// kernels/cpu's Q8_1 quantizer and to exact integer dots. Activations are quantized per 32-element
// block as the CPU quantizes Q8_1 (d = amax / 127 rounded to a half, codes round(x / d)), keeping
// the codes' sum as an exact integer in place of Q8_1's rounded d x sum. A weight block meets one
// activation block in integers (four byte products a dp4a instruction), then in floats once:
//   Q8_0: (dw dx) dot        Q4_0: (dw dx) (dot - 8 sum)        Q4_1: (dw dx) dot + (mw dx) sum
// with dot the sum of code products (nibbles 0..15 for Q4) and sum the activation codes' sum.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/format/quant_blocks.h"
#include "kernels/cuda/host_device.h"

namespace inferscope::gpu {

constexpr int kQ8Block = 32;                  // activation elements per scale (QK8_1)
constexpr int kQ8Words = kQ8Block / 4;        // 32-bit words of codes per block

// One activation block's scale and codes' sum.
struct Q8BlockScale {
  f16_bits d;
  int16_t sum;  // |sum| <= 32 x 127
};
static_assert(sizeof(Q8BlockScale) == 4);

// Bytes of n_tok quantized rows of cols (a multiple of kQ8Block): every token's codes (cols bytes each,
// token after token), then every token's block scales.
INFERSCOPE_HD inline size_t q8_activation_bytes(int64_t n_tok, int64_t cols) {
  return static_cast<size_t>(n_tok * cols) + static_cast<size_t>(n_tok * (cols / kQ8Block)) * sizeof(Q8BlockScale);
}

// The code of x in a block of scale d, given inv_d = 1 / d (0 when d is 0): round half away from zero.
INFERSCOPE_HD inline int q8_code(float x, float inv_d) { return static_cast<int>(roundf(x * inv_d)); }

// c + the sum of the four signed byte products of a and b (dp4a on the device).
INFERSCOPE_HD inline int dot4(int32_t a, int32_t b, int c) {
#ifdef __CUDA_ARCH__
  return __dp4a(a, b, c);
#else
  for (int k = 0; k < 4; ++k) {
    c += static_cast<int8_t>(static_cast<uint32_t>(a) >> (8 * k)) * static_cast<int8_t>(static_cast<uint32_t>(b) >> (8 * k));
  }
  return c;
#endif
}

// A Q4 block's 16 code bytes, read as four little-endian words, as eight words of byte codes in the
// activations' order: word k (elements 4k..4k+3) the low nibbles of word k, word 4 + k (elements
// 16 + 4k..) its high nibbles.
INFERSCOPE_HD inline void q4_code_words(const uint32_t (&packed)[4], int32_t (&codes)[kQ8Words]) {
  for (int k = 0; k < 4; ++k) {
    codes[k] = static_cast<int32_t>(packed[k] & 0x0F0F0F0Fu);
    codes[4 + k] = static_cast<int32_t>((packed[k] >> 4) & 0x0F0F0F0Fu);
  }
}

// The sum of code products of one block: weight and activation words in the same element order.
INFERSCOPE_HD inline int block_dot(const int32_t (&w)[kQ8Words], const int32_t (&x)[kQ8Words]) {
  int dot = 0;
  for (int k = 0; k < kQ8Words; ++k) dot = dot4(w[k], x[k], dot);
  return dot;
}

// One weight block against one activation block, in floats.
INFERSCOPE_HD inline float q8_0_q8_block(float dw, float dx, int dot) { return (dw * dx) * static_cast<float>(dot); }
INFERSCOPE_HD inline float q4_0_q8_block(float dw, float dx, int dot, int sum) {
  return (dw * dx) * static_cast<float>(dot - 8 * sum);
}
INFERSCOPE_HD inline float q4_1_q8_block(float dw, float mw, float dx, int dot, int sum) {
  return (dw * dx) * static_cast<float>(dot) + (mw * dx) * static_cast<float>(sum);
}

}  // namespace inferscope::gpu
