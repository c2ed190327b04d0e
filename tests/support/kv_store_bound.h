// How far a value read back from a KV cache may be from the f32 value stored, per KV dtype.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/format/dtype.h"
#include "kernels/cpu/quantize.h"

namespace inferscope::test {

// The bound for element `d` of a row of `head_dim` floats `row`: 0 in f32; f16 rounds to nearest,
// within 2^-11 of the value; q8 (Q8_0) stores q = round(x / s) with s = absmax(x's block of 32) / 127,
// so x - q*s is at most s/2 (plus the f32 rounding of x * (1/s), under 1e-5 s), and the scale itself
// is kept in f16 as s', which moves q*s by |q| |s - s'| <= 127 |s - s'|.
inline double kv_store_bound(DType dtype, const float* row, int32_t d) {
  const double x = row[d];
  if (dtype == DType::F32) return 0.0;
  if (dtype == DType::F16) return std::ldexp(std::fabs(x), -11);
  const float* block = row + d / 32 * 32;
  float amax = 0.0f;
  for (int32_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(block[j]));
  const float s = amax / 127.0f;
  const double stored_s = fp16_to_f32(f32_to_fp16(s));
  return 0.5 * s + 1e-5 * s + 127.0 * std::fabs(s - stored_s);
}

}  // namespace inferscope::test
