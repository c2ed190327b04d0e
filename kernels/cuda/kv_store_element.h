// The per-element maths of the KV store kernel, shared with the CPU test that pins it to
// kernels/cpu's f32_to_fp16 (what KvCache::store writes for an f16 cache) bit for bit.
#pragma once
#include <cstdint>

#include "kernels/format/quant_blocks.h"
#include "kernels/cuda/host_device.h"

namespace inferscope::gpu {

// f32 to IEEE half, round to nearest even; overflow goes to inf, a NaN stays a quiet NaN with the
// top of its payload (fp16.cpp's f32_to_fp16).
INFERSCOPE_HD inline f16_bits f32_to_f16(uint32_t x) {
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<f16_bits>(sign | 0x7e00u | ((abs >> 13) & 0x1ffu));
  if (abs >= 0x47800000u) return static_cast<f16_bits>(sign | 0x7c00u);
  const int e = static_cast<int>(abs >> 23) - 127;
  const uint32_t mant = abs & 0x7fffffu;
  if (e >= -14) {
    // normal half: the top 10 mantissa bits, the 13 dropped ones rounded to nearest even
    uint32_t h = (static_cast<uint32_t>(e + 15) << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return static_cast<f16_bits>(sign | h);
  }
  if (e < -25) return sign;
  // subnormal half: the 24-bit significand shifted right by -(e+1), rounded to nearest even
  const uint32_t sig = mant | 0x800000u;
  const int shift = -(e + 1);
  uint32_t h = sig >> shift;
  const uint32_t rem = sig & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (h & 1u))) ++h;
  return static_cast<f16_bits>(sign | h);
}

}  // namespace inferscope::gpu
