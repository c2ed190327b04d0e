// F16 rows to f32 with F16C, eight at a time, and Q8_0 blocks to f32 eight values at a time
// (compiled with -mavx2 -mfma -mf16c).
#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/dequantize_kernels.h"

namespace inferscope::cpu {

void dequantize_f16_avx2(const void* src, float* dst, int64_t n) {
  const auto* h = static_cast<const f16_bits*>(src);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(halves));
  }
  for (; i < n; ++i) dst[i] = f16(h[i]);
}

void dequantize_q8_0_avx2(const void* src, float* dst, int64_t nb) {
  const auto* b = static_cast<const BlockQ8_0*>(src);
  for (int64_t i = 0; i < nb; ++i, dst += QK8_0) {
    const __m256 d = _mm256_set1_ps(f16(b[i].d));
    for (int j = 0; j < QK8_0; j += 8) {
      // 8 int8 -> 8 int32 -> 8 floats (exact), times the block scale: one rounding, as the scalar loop
      const __m128i q8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b[i].qs + j));
      const __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q8));
      _mm256_storeu_ps(dst + j, _mm256_mul_ps(q, d));
    }
  }
}

}  // namespace inferscope::cpu
