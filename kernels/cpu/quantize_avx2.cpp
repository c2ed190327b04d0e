// AVX2 quantization of activation rows to Q8_0, Q8_1 and Q8_K, byte-identical to quantize_row(): the
// same float operations per element, eight elements at a time (Q8_0/Q8_1 for finite input: d =
// amax/127, q = round(x * (1/d)) half away from zero; Q8_K for any input: a block holding a NaN or an
// infinity goes through quantize_row itself).
#include <cstring>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/quantize.h"

namespace inferscope::cpu {
namespace {

// std::round in 8 lanes: truncate, then step one away from zero where |fraction| >= 0.5.
__m256 round_half_away(__m256 v) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 frac = _mm256_andnot_ps(sign_bit, _mm256_sub_ps(v, t));  // exact: |v - trunc(v)|
  const __m256 away = _mm256_or_ps(_mm256_and_ps(v, sign_bit), _mm256_set1_ps(1.0f));  // +-1 with v's sign
  return _mm256_add_ps(t, _mm256_and_ps(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ), away));
}

// Four vectors of int32 codes (32 elements) -> bytes in element order: in-lane packs, then undo their
// interleaving of the two 128-bit halves.
void store_codes32(const __m256i* q, int8_t* qs) {
  const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs),
                      _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

// The largest of eight floats (none NaN).
float hmax(__m256 v) {
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  return _mm_cvtss_f32(m4);
}

// The sum of eight int32 lanes.
int hsum_i32(__m256i v) {
  __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s4 = _mm_add_epi32(s4, _mm_unpackhi_epi64(s4, s4));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 1));
  return _mm_cvtsi128_si32(s4);
}

// One block of 32: writes the codes to qs, returns d (unrounded) and the sum of the codes.
float quantize_block(const float* x, int8_t* qs, int32_t& sum) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 v[4];
  __m256 amax = _mm256_setzero_ps();
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm256_loadu_ps(x + 8 * k);
    amax = _mm256_max_ps(amax, _mm256_and_ps(v[k], abs_mask));
  }
  const float d = hmax(amax) / 127.0f;
  const __m256 id = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
  __m256i q[4];
  __m256i sums = _mm256_setzero_si256();
  for (int k = 0; k < 4; ++k) {
    q[k] = _mm256_cvtps_epi32(round_half_away(_mm256_mul_ps(v[k], id)));
    sums = _mm256_add_epi32(sums, q[k]);
  }
  store_codes32(q, qs);
  sum = hsum_i32(sums);
  return d;
}

// f32 -> f16 bits, rounding to nearest even as f32_to_fp16() does, in one F16C instruction.
f16_bits to_f16(float f) { return static_cast<f16_bits>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)); }

// One Q8_K block; false (nothing written) when it holds a NaN or an infinity.
bool quantize_block_q8_k(const float* x, BlockQ8_K& b) {
  constexpr int kVectors = QK_K / 8;
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256 inf = _mm256_set1_ps(__builtin_inff());
  __m256 amax = _mm256_setzero_ps(), bad = _mm256_setzero_ps();
  for (int k = 0; k < kVectors; ++k) {
    const __m256 a = _mm256_and_ps(_mm256_loadu_ps(x + 8 * k), abs_mask);
    amax = _mm256_max_ps(amax, a);
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(a, inf, _CMP_NLT_UQ));  // |x| >= inf, or NaN
  }
  if (_mm256_movemask_ps(bad) != 0) return false;
  const float amax1 = hmax(amax);
  if (amax1 == 0.0f) {
    std::memset(&b, 0, sizeof b);
    return true;
  }
  // the signed value of the first element whose magnitude is the maximum, as signed_absmax picks
  float max = amax1;
  for (int k = 0; k < kVectors; ++k) {
    const __m256 v = _mm256_loadu_ps(x + 8 * k);
    const int hits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(v, abs_mask), _mm256_set1_ps(amax1), _CMP_EQ_OQ));
    if (hits != 0) {
      max = x[8 * k + __builtin_ctz(static_cast<unsigned>(hits))];
      break;
    }
  }
  const float iscale = -127.0f / max;
  const __m256 vs = _mm256_set1_ps(iscale), lo = _mm256_set1_ps(-128.0f), hi = _mm256_set1_ps(127.0f);
  for (int g = 0; g < QK_K / 32; ++g) {
    __m256i q[4];
    for (int k = 0; k < 4; ++k) {
      // clamp, then round half to even, as round_clamped; min's second operand is what a NaN product
      // (0 times an overflowed scale) becomes, 127, as fmin gives
      const __m256 v = _mm256_max_ps(_mm256_min_ps(_mm256_mul_ps(vs, _mm256_loadu_ps(x + 32 * g + 8 * k)), hi), lo);
      q[k] = _mm256_cvtps_epi32(_mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    store_codes32(q, b.qs + 32 * g);
    b.bsums[2 * g] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(q[0], q[1])));
    b.bsums[2 * g + 1] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(q[2], q[3])));
  }
  b.d = 1.0f / iscale;
  return true;
}

}  // namespace

void quantize_q8_k_avx2(const float* x, void* dst, int64_t n) {
  auto* b = static_cast<BlockQ8_K*>(dst);
  for (int64_t i = 0; i < n / QK_K; ++i)
    if (!quantize_block_q8_k(x + i * QK_K, b[i])) quantize_row(DType::Q8_K, x + i * QK_K, &b[i], QK_K);
}

void quantize_q8_0_avx2(const float* x, void* dst, int64_t n) {
  auto* b = static_cast<BlockQ8_0*>(dst);
  for (int64_t i = 0; i < n / QK8_0; ++i) {
    int32_t sum;
    b[i].d = to_f16(quantize_block(x + i * QK8_0, b[i].qs, sum));
  }
}

void quantize_q8_1_avx2(const float* x, void* dst, int64_t n) {
  auto* b = static_cast<BlockQ8_1*>(dst);
  for (int64_t i = 0; i < n / QK8_1; ++i) {
    int32_t sum;
    const float d = quantize_block(x + i * QK8_1, b[i].qs, sum);
    b[i].d = to_f16(d);
    b[i].s = to_f16(static_cast<float>(sum) * d);  // with the unrounded d, as quantize_row
  }
}

}  // namespace inferscope::cpu
