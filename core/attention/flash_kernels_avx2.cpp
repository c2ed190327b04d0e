// flash_kernels.h eight lanes at a time (compiled with -mavx2 -mfma -mf16c; runs only when use_avx2()).
// Like kernels/cpu's AVX2 files, no std:: templates or inline library functions are used here.
#include "core/attention/flash_kernels.h"
#include "kernels/cpu/avx2_common.h"

namespace inferscope {
namespace {

using cpu::fma1;
using cpu::hsum;

// 2^x in 8 lanes for x <= 0 (all the update needs): x = i + f with i = round(x) and |f| <= 1/2; 2^f by
// its degree-7 Taylor polynomial in f·ln2 (error < 1e-8), times 2^i built in the exponent bits.
// x < -126 (-inf included) gives 0; NaN stays NaN.
__m256 exp2_8(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-126.0f);
  const __m256 xc = _mm256_max_ps(lo, x);  // x second: a NaN passes through
  const __m256 i = _mm256_round_ps(xc, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 f = _mm256_sub_ps(xc, i);
  // ln2^k / k!, k = 7 .. 1
  __m256 p = _mm256_set1_ps(1.525273380405984e-05f);
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.5403530393381606e-04f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.3333558146428443e-03f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(9.618129107628477e-03f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(5.550410866482158e-02f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(2.402265069591007e-01f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(6.931471805599453e-01f));
  p = _mm256_fmadd_ps(p, f, _mm256_set1_ps(1.0f));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(i), _mm256_set1_epi32(127)), 23);
  return _mm256_and_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(bits)), _mm256_cmp_ps(x, lo, _CMP_NLT_UQ));
}

float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

// q · k over the head_dim % 8 tail, continuing from acc (the 8-lane part's sum).
float dot_tail(const float* q, const float* k, int32_t d, int32_t head_dim, float acc) {
  for (; d < head_dim; ++d) acc = fma1(q[d], k[d], acc);
  return acc;
}

// Four keys per pass (one q load feeds four FMAs); each score is hsum(8 lanes) + tail, as for one key.
void scores_avx2(const float* q, const float* k, int32_t n, int32_t head_dim, float* s) {
  const int32_t hd8 = head_dim & ~7;
  int32_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* k0 = k + static_cast<int64_t>(j) * head_dim;
    const float *k1 = k0 + head_dim, *k2 = k1 + head_dim, *k3 = k2 + head_dim;
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    for (int32_t d = 0; d < hd8; d += 8) {
      const __m256 qv = _mm256_loadu_ps(q + d);
      a0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + d), a0);
      a1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k1 + d), a1);
      a2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k2 + d), a2);
      a3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k3 + d), a3);
    }
    s[j] = dot_tail(q, k0, hd8, head_dim, hsum(a0));
    s[j + 1] = dot_tail(q, k1, hd8, head_dim, hsum(a1));
    s[j + 2] = dot_tail(q, k2, hd8, head_dim, hsum(a2));
    s[j + 3] = dot_tail(q, k3, hd8, head_dim, hsum(a3));
  }
  for (; j < n; ++j) {
    const float* kj = k + static_cast<int64_t>(j) * head_dim;
    __m256 a = _mm256_setzero_ps();
    for (int32_t d = 0; d < hd8; d += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(kj + d), a);
    s[j] = dot_tail(q, kj, hd8, head_dim, hsum(a));
  }
}

// o[d0 .. d0+8*W) = alpha * o + sum_j p_j v_j, W accumulators of 8 columns held in registers over j.
template <int W>
void pv_columns(const float* p, int32_t n, const float* v, int32_t head_dim, __m256 alpha, float* o) {
  __m256 acc[W];
  for (int w = 0; w < W; ++w) acc[w] = _mm256_mul_ps(_mm256_loadu_ps(o + 8 * w), alpha);
  for (int32_t j = 0; j < n; ++j, v += head_dim) {
    const __m256 pj = _mm256_broadcast_ss(p + j);
    for (int w = 0; w < W; ++w) acc[w] = _mm256_fmadd_ps(pj, _mm256_loadu_ps(v + 8 * w), acc[w]);
  }
  for (int w = 0; w < W; ++w) _mm256_storeu_ps(o + 8 * w, acc[w]);
}

void update_avx2(float* s, int32_t n, const float* v, int32_t head_dim, float& m, float& l, float* o) {
  const int32_t n8 = n & ~7;
  // m_new = max(m_old, rowmax(S))
  __m256 vmax = _mm256_set1_ps(m);
  for (int32_t j = 0; j < n8; j += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(s + j));
  float m_new = hmax(vmax);
  for (int32_t j = n8; j < n; ++j) m_new = s[j] > m_new ? s[j] : m_new;
  // P = exp(S - m_new), summed in 8 lanes (the tail padded with -inf, whose exp is 0)
  const __m256 mv = _mm256_set1_ps(m_new);
  __m256 rowsum = _mm256_setzero_ps();
  for (int32_t j = 0; j < n8; j += 8) {
    const __m256 p = exp2_8(_mm256_sub_ps(_mm256_loadu_ps(s + j), mv));
    _mm256_storeu_ps(s + j, p);
    rowsum = _mm256_add_ps(rowsum, p);
  }
  if (n8 < n) {
    float tail[8];
    for (int32_t k = 0; k < 8; ++k) tail[k] = n8 + k < n ? s[n8 + k] : -__builtin_inff();
    const __m256 p = exp2_8(_mm256_sub_ps(_mm256_loadu_ps(tail), mv));
    _mm256_storeu_ps(tail, p);
    rowsum = _mm256_add_ps(rowsum, p);
    for (int32_t k = 0; n8 + k < n; ++k) s[n8 + k] = tail[k];
  }
  // l_new = exp(m_old - m_new) * l_old + rowsum(P)
  const __m256 alpha = exp2_8(_mm256_set1_ps(m - m_new));
  l = fma1(_mm256_cvtss_f32(alpha), l, hsum(rowsum));
  m = m_new;
  // O_new = exp(m_old - m_new) * O_old + P·V: 32 columns at a time, then 8, then one by one
  int32_t d = 0;
  for (; d + 32 <= head_dim; d += 32) pv_columns<4>(s, n, v + d, head_dim, alpha, o + d);
  for (; d + 8 <= head_dim; d += 8) pv_columns<1>(s, n, v + d, head_dim, alpha, o + d);
  for (; d < head_dim; ++d) {
    float acc = o[d] * _mm256_cvtss_f32(alpha);
    for (int32_t j = 0; j < n; ++j) acc = fma1(s[j], v[static_cast<int64_t>(j) * head_dim + d], acc);
    o[d] = acc;
  }
}

}  // namespace

const FlashRowKernels& flash_kernels_avx2() {
  static const FlashRowKernels kernels{scores_avx2, update_avx2};
  return kernels;
}

}  // namespace inferscope
