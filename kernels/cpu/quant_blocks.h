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
// 8 sub-blocks of 32: x = d * scale_j * q - dmin * min_j, 6-bit scale_j/min_j packed in scales[12].
struct BlockQ4_K { f16_bits d; f16_bits dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qs[QK_K / 2]; };
// As Q4_K with a fifth bit per element in qh.
struct BlockQ5_K { f16_bits d; f16_bits dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qh[QK_K / 8]; uint8_t qs[QK_K / 2]; };
// 16 sub-blocks of 16: x = d * scales_j * (q - 32), q 6 bits = 4 low bits in ql, 2 high bits in qh.
struct BlockQ6_K { uint8_t ql[QK_K / 2]; uint8_t qh[QK_K / 4]; int8_t scales[QK_K / 16]; f16_bits d; };
// Activation partner of the K-quants: x_i = qs_i * d; bsums[j] = sum of qs over group j of 16.
struct BlockQ8_K { float d; int8_t qs[QK_K]; int16_t bsums[QK_K / 16]; };

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
