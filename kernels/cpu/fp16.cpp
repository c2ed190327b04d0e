// Scalar IEEE half and bfloat16 conversions, rounding to nearest even (no F16C needed).
#include <bit>
#include <cmath>
#include <cstdint>

#include "kernels/cpu/quantize.h"

namespace inferscope {

float fp16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in f32.
    const float mag = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -mag : mag;
  }
  if (exp == 31) {
    // inf; a NaN keeps its payload and comes back quiet, as IEEE conversion (and F16C) does
    const uint32_t quiet = mant != 0 ? 0x00400000u : 0u;
    return std::bit_cast<float>(sign | 0x7f800000u | quiet | (mant << 13));
  }
  // Normal: rebias the exponent from 15 to 127 and widen the mantissa from 10 to 23 bits.
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t f32_to_fp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u | static_cast<uint16_t>((abs >> 13) & 0x1ffu);  // quiet NaN
  if (abs >= 0x47800000u) return sign | 0x7c00u;  // |f| >= 65536 (or inf): overflows to inf
  const int e = static_cast<int>(abs >> 23) - 127;  // unbiased exponent
  const uint32_t mant = abs & 0x7fffffu;
  if (e >= -14) {
    // Normal half: keep the top 10 mantissa bits, round the 13 dropped ones to nearest even.
    uint32_t h = (static_cast<uint32_t>(e + 15) << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry may reach inf: correct (65520 -> inf)
    return sign | static_cast<uint16_t>(h);
  }
  if (e < -25) return sign;  // below half the smallest subnormal: rounds to zero
  // Subnormal half: value / 2^-24 = (1.mant) * 2^(e+24), so shift the 24-bit significand right by -(e+1).
  const uint32_t sig = mant | 0x800000u;
  const int shift = -(e + 1);
  uint32_t h = sig >> shift;
  const uint32_t rem = sig & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (h & 1u))) ++h;  // may round up into the smallest normal: bits still right
  return sign | static_cast<uint16_t>(h);
}

float bf16_to_f32(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t f32_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  // Add just under half an ulp of bf16, plus one if the kept lsb is odd: ties go to even.
  const uint32_t rounded = x + 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

}  // namespace inferscope
