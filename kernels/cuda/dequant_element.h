// Element-wise decoding of the stored weight formats, shared by the CUDA kernels and the CPU tests
// that pin them to kernels/cpu (fp16.cpp, dequantize.cpp) bit for bit. The .cu files are compiled with
// --fmad=false, so `q * d + m` rounds twice on the GPU as it does on the CPU.
#pragma once
#include <cstdint>

#include "kernels/format/quant_blocks.h"
#include "kernels/cuda/host_device.h"

#ifdef __CUDA_ARCH__
#include <cuda_fp16.h>
#endif

namespace inferscope::gpu {

// IEEE half to f32 (exact; a NaN keeps its payload and comes back quiet), as fp16_to_f32.
INFERSCOPE_HD inline float f16_to_f32(f16_bits h) {
#ifdef __CUDA_ARCH__
  // on the device one conversion instruction, exact for every finite value and infinity; a NaN takes
  // the path below, which keeps its payload
  if (((h >> 10) & 0x1fu) != 0x1fu) return __half2float(__ushort_as_half(h));
#endif
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    // zero or subnormal: mant * 2^-24, exact in f32
    const float mag = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -mag : mag;
  }
  if (exp == 31) return float_from_bits(sign | 0x7f800000u | (mant != 0 ? 0x00400000u : 0u) | (mant << 13));
  // normal: rebias the exponent from 15 to 127 and widen the mantissa from 10 to 23 bits
  return float_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));
}

// One Q4_0 value from its nibble q (0..15) and the block scale d: (q - 8) * d.
INFERSCOPE_HD inline float q4_0_value(int q, float d) { return static_cast<float>(q - 8) * d; }

// One Q4_1 value from its nibble q, scale d and offset m: q * d + m.
INFERSCOPE_HD inline float q4_1_value(int q, float d, float m) { return static_cast<float>(q) * d + m; }

// One Q8_0 value from its quant q and scale d: q * d.
INFERSCOPE_HD inline float q8_0_value(int q, float d) { return static_cast<float>(q) * d; }

// The nibble of element i (0..31) of a Q4_0/Q4_1 block: byte i % 16, low half for i < 16.
INFERSCOPE_HD inline int q4_nibble(const uint8_t* qs, int i) {
  const uint8_t byte = qs[i % (QK4_0 / 2)];
  return i < QK4_0 / 2 ? (byte & 0x0f) : (byte >> 4);
}

// The GEMV decodes a Q4 block a quarter at a time: quarter q's 4 bytes qs[4q..4q+3] (read as one
// little-endian u32) give its 8 elements k = 0..7, low nibbles first. Element k's column in the block:
INFERSCOPE_HD inline int q4_quarter_column(int quarter, int k) {
  return k < 4 ? 4 * quarter + k : QK4_0 / 2 + 4 * quarter + (k - 4);
}
// and its nibble:
INFERSCOPE_HD inline int q4_quarter_nibble(uint32_t bytes, int k) {
  return static_cast<int>((bytes >> (8 * (k % 4) + (k < 4 ? 0 : 4))) & 0x0f);
}

// Element i (0..31) of one block.
INFERSCOPE_HD inline float q4_0_element(const BlockQ4_0& b, int i) { return q4_0_value(q4_nibble(b.qs, i), f16_to_f32(b.d)); }
INFERSCOPE_HD inline float q4_1_element(const BlockQ4_1& b, int i) {
  return q4_1_value(q4_nibble(b.qs, i), f16_to_f32(b.d), f16_to_f32(b.m));
}
INFERSCOPE_HD inline float q8_0_element(const BlockQ8_0& b, int i) { return q8_0_value(b.qs[i], f16_to_f32(b.d)); }

}  // namespace inferscope::gpu
