// softmax, SwiGLU and GeGLU eight lanes at a time, with a vector exp. Every element, tails included, goes
// through the same exp8, so an element's value never depends on where it sits in the row.
#include "kernels/cpu/ops_kernels.h"

#include "kernels/cpu/avx2_common.h"

namespace inferscope::cpu {
namespace {

// e^x in 8 lanes: x = n*ln2 + r with |r| <= ln2/2, e^r by its degree-7 Taylor polynomial (truncation
// error < 1e-8, below f32 rounding), times 2^n built in the exponent bits. NaN stays NaN, large x
// gives inf, and results below ~2^-125 (x < -86.6) are flushed to 0.
__m256 exp8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-86.6f), hi = _mm256_set1_ps(88.8f);
  // x as the second operand of min/max: a NaN x passes through the clamp
  const __m256 xc = _mm256_max_ps(lo, _mm256_min_ps(hi, x));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // r = x - n*ln2 in two steps: ln2_hi has few mantissa bits, so n*ln2_hi is exact
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  // 2^(n-1) then *2, so that n = 128 (x just below the overflow point) still has a valid exponent
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(126)), 23);
  const __m256 e = _mm256_mul_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(bits)), _mm256_set1_ps(2.0f));
  return _mm256_and_ps(e, _mm256_cmp_ps(x, lo, _CMP_NLT_UQ));  // x < lo -> 0 (NaN compares true: kept)
}

float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

}  // namespace

void softmax_avx2(float* x, int64_t n) {
  if (n <= 0) return;
  __m256 vmax = _mm256_set1_ps(x[0]);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) vmax = _mm256_max_ps(_mm256_loadu_ps(x + i), vmax);
  float max = hmax(vmax);
  for (; i < n; ++i) max = x[i] > max ? x[i] : max;
  const __m256 m = _mm256_set1_ps(max);

  // exponentials, summed in double (4 + 4 lanes) in a fixed order; the tail padded with -inf (e^-inf = 0)
  __m256d sum_lo = _mm256_setzero_pd(), sum_hi = _mm256_setzero_pd();
  auto exp_block = [&](float* p) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(p), m));
    _mm256_storeu_ps(p, e);
    sum_lo = _mm256_add_pd(sum_lo, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
    sum_hi = _mm256_add_pd(sum_hi, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
  };
  for (i = 0; i + 8 <= n; i += 8) exp_block(x + i);
  if (i < n) {
    float tail[8];
    for (int k = 0; k < 8; ++k) tail[k] = i + k < n ? x[i + k] : -__builtin_inff();
    exp_block(tail);
    for (int64_t k = 0; i + k < n; ++k) x[i + k] = tail[k];
  }
  const __m256d s = _mm256_add_pd(sum_lo, sum_hi);
  __m128d s2 = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
  s2 = _mm_add_sd(s2, _mm_unpackhi_pd(s2, s2));
  const float inv = static_cast<float>(1.0 / _mm_cvtsd_f64(s2));

  for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), _mm256_set1_ps(inv)));
  for (; i < n; ++i) x[i] *= inv;
}

namespace {

// gate[i] = g / (1 + e^z) * up[i], g = gate[i], z = exponent(g) in 8 lanes: SwiGLU and GeGLU.
template <class Exponent>
void gated_avx2(float* gate, const float* up, int64_t n, Exponent exponent) {
  auto block = [&](const float* g_in, const float* u_in, float* out) {
    const __m256 g = _mm256_loadu_ps(g_in);
    const __m256 act = _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), exp8(exponent(g))));
    _mm256_storeu_ps(out, _mm256_mul_ps(act, _mm256_loadu_ps(u_in)));
  };
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) block(gate + i, up + i, gate + i);
  if (i < n) {  // the tail through zero-padded copies
    float g[8] = {}, u[8] = {}, out[8];
    for (int64_t k = 0; i + k < n; ++k) {
      g[k] = gate[i + k];
      u[k] = up[i + k];
    }
    block(g, u, out);
    for (int64_t k = 0; i + k < n; ++k) gate[i + k] = out[k];
  }
}

}  // namespace

// silu(g) = g / (1 + e^-g)
void swiglu_avx2(float* gate, const float* up, int64_t n) {
  gated_avx2(gate, up, n, [](__m256 g) { return _mm256_xor_ps(g, _mm256_set1_ps(-0.0f)); });
}

// The tanh GELU as a sigmoid: 0.5 g (1 + tanh u) = g / (1 + e^-2u), u = sqrt(2/pi) (g + 0.044715 g^3),
// so -2u = g (k1 + k2 g^2)
void geglu_avx2(float* gate, const float* up, int64_t n) {
  constexpr float k1 = -2.0f * 0.7978845608028654f, k2 = k1 * 0.044715f;
  gated_avx2(gate, up, n, [](__m256 g) {
    return _mm256_mul_ps(g, _mm256_fmadd_ps(_mm256_set1_ps(k2), _mm256_mul_ps(g, g), _mm256_set1_ps(k1)));
  });
}

}  // namespace inferscope::cpu
