#include <immintrin.h>

#include "kernels/cpu/peak_flops.h"

namespace inferscope {

float fma_chains_avx2(int64_t iterations, float seed) {
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  __m256 acc[kPeakFmaChains];
  for (int c = 0; c < kPeakFmaChains; ++c) acc[c] = _mm256_set1_ps(seed + static_cast<float>(c));
  for (int64_t i = 0; i < iterations; ++i) {
    // x = x * a + b stays bounded (a < 1), so no lane overflows or turns denormal.
    for (int c = 0; c < kPeakFmaChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kPeakFmaChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

}  // namespace inferscope
