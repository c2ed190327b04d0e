// Block layouts of the quantized types, byte-compatible with ggml's (GGUF tensor data).
// Each struct is one block; x_i is the dequantized value of element i of the block.
#pragma once
#include <cstdint>

namespace inferscope {

using f16_bits = uint16_t;  // IEEE half, raw bits
using bf16_bits = uint16_t; // bfloat16, raw bits

constexpr int QK4_0 = 32, QK4_1 = 32, QK5_0 = 32, QK5_1 = 32, QK8_0 = 32, QK8_1 = 32;
constexpr int QK_K = 256;          // super-block of the K-quants
constexpr int K_SCALE_SIZE = 12;   // packed 6-bit scales/mins of Q4_K and Q5_K

// x_i = (q_i - 8) * d. qs[j] holds element j (low nibble) and j+16 (high nibble).
struct BlockQ4_0 { f16_bits d; uint8_t qs[QK4_0 / 2]; };
// x_i = q_i * d + m. Nibbles as Q4_0.
struct BlockQ4_1 { f16_bits d; f16_bits m; uint8_t qs[QK4_1 / 2]; };
// x_i = (q_i - 16) * d; q_i = nibble | (bit i of qh) << 4, qh read as a little-endian uint32.
struct BlockQ5_0 { f16_bits d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; };
// x_i = q_i * d + m; bits as Q5_0.
struct BlockQ5_1 { f16_bits d; f16_bits m; uint8_t qh[4]; uint8_t qs[QK5_1 / 2]; };
// x_i = qs_i * d.
struct BlockQ8_0 { f16_bits d; int8_t qs[QK8_0]; };
// x_i = qs_i * d; s = d * sum(qs) (used as the activation partner of Q4_1/Q5_1).
struct BlockQ8_1 { f16_bits d; f16_bits s; int8_t qs[QK8_1]; };
// 8 sub-blocks of 32: element 32*j + l is x = d * scale_j * q - dmin * min_j (see k_scale_min for the
// 6-bit scale_j/min_j packed in scales[12]); q = low nibble of qs[32*(j/2) + l] for even j, high for odd j.
struct BlockQ4_K { f16_bits d; f16_bits dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qs[QK_K / 2]; };
// As Q4_K, with q's fifth bit (value 16) for element 32*j + l in bit j of qh[l].
struct BlockQ5_K { f16_bits d; f16_bits dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qh[QK_K / 8]; uint8_t qs[QK_K / 2]; };
// 16 sub-blocks of 16: element i is x = d * scales[i/16] * (q - 32), q of 6 bits. Writing
// i = 128*h + 32*k + l (k < 4, l < 32): the 4 low bits are the low (k < 2) or high (k >= 2) nibble
// of ql[64*h + 32*(k%2) + l], the 2 high bits are bits 2k..2k+1 of qh[32*h + l].
struct BlockQ6_K { uint8_t ql[QK_K / 2]; uint8_t qh[QK_K / 4]; int8_t scales[QK_K / 16]; f16_bits d; };
// Activation partner of the K-quants: x_i = qs_i * d (d is f32); bsums[j] = sum of qs over group j of 16.
struct BlockQ8_K { float d; int8_t qs[QK_K]; int16_t bsums[QK_K / 16]; };

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K block: for j < 4 the low 6 bits of
// scales[j] and scales[j+4]; for j >= 4 the nibbles of scales[j+4] (scale low, min high) topped with
// the 2 spare high bits of scales[j-4] (scale) and scales[j] (min).
inline void k_scale_min(int j, const uint8_t* scales, uint8_t& scale, uint8_t& min) {
  if (j < 4) {
    scale = scales[j] & 63;
    min = scales[j + 4] & 63;
  } else {
    scale = static_cast<uint8_t>((scales[j + 4] & 0x0f) | ((scales[j - 4] >> 6) << 4));
    min = static_cast<uint8_t>((scales[j + 4] >> 4) | ((scales[j] >> 6) << 4));
  }
}

// The inverse of k_scale_min: ORs the 6-bit scale and min of sub-block j into scales[12], which the
// caller zeroed first.
inline void set_k_scale_min(int j, uint8_t scale, uint8_t min, uint8_t* scales) {
  if (j < 4) {
    scales[j] |= scale;
    scales[j + 4] |= min;
  } else {
    scales[j + 4] |= static_cast<uint8_t>((scale & 0x0f) | ((min & 0x0f) << 4));
    scales[j - 4] |= static_cast<uint8_t>((scale >> 4) << 6);
    scales[j] |= static_cast<uint8_t>((min >> 4) << 6);
  }
}

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ8_1) == 36);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

}  // namespace inferscope
