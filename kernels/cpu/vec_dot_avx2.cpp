// AVX2/FMA/F16C dot products of the float types and of Q5_K and Q6_K with Q8_K activations (compiled
// with -mavx2 -mfma -mf16c; run only when use_avx2()); the 32-element block types with int8
// activations live in gemm_rows8_avx2.cpp (Q4_0, Q4_1, Q8_0, and Q4_K) and gemm_avx2.cpp (Q5_0, Q5_1), the
// f32-activation kernels in gemm_f32act_avx2.cpp.
#include <cstring>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/quantize.h"

namespace inferscope::cpu {
namespace {

// ---- float weights x f32 activations: 4 accumulators of 8 lanes over 32 elements, then 8, then 1.

template <class Load8, class Load1>
float dot_float(const float* y, int64_t n, Load8 load8, Load1 load1) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps(), acc2 = _mm256_setzero_ps(),
         acc3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm256_fmadd_ps(load8(i), _mm256_loadu_ps(y + i), acc0);
    acc1 = _mm256_fmadd_ps(load8(i + 8), _mm256_loadu_ps(y + i + 8), acc1);
    acc2 = _mm256_fmadd_ps(load8(i + 16), _mm256_loadu_ps(y + i + 16), acc2);
    acc3 = _mm256_fmadd_ps(load8(i + 24), _mm256_loadu_ps(y + i + 24), acc3);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(load8(i), _mm256_loadu_ps(y + i), acc0);
  float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
  for (; i < n; ++i) sum = fma1(load1(i), y[i], sum);
  return sum;
}

float dot_f32(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const float*>(w);
  return dot_float(
      static_cast<const float*>(a), n, [x](int64_t i) { return _mm256_loadu_ps(x + i); },
      [x](int64_t i) { return x[i]; });
}

float dot_f16(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const f16_bits*>(w);
  return dot_float(
      static_cast<const float*>(a), n,
      [x](int64_t i) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))); },
      [x](int64_t i) { return f16(x[i]); });
}

float dot_bf16(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const bf16_bits*>(w);
  // bf16 is the top half of an f32: widen to 32 bits and shift into place
  return dot_float(
      static_cast<const float*>(a), n,
      [x](int64_t i) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
      },
      [x](int64_t i) {
        const uint32_t bits = uint32_t{x[i]} << 16;
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
      });
}

// ---- K-quants x Q8_K: one super-block of 256 at a time, integer sums weighted by the 6/8-bit
// sub-block scales in int32, then one fma per super-block.

// The mins term of Q4_K/Q5_K: sum over sub-blocks j of min_j * (sum of its 32 activation codes).
int32_t k_min_sum(const int* mins, const int16_t* bsums) {
  int32_t msum = 0;
  for (int j = 0; j < 8; ++j) msum += mins[j] * (bsums[2 * j] + bsums[2 * j + 1]);
  return msum;
}

template <bool kFifthBit>
__m256i q45_k_isum(const uint8_t* qs, const uint8_t* qh, const int* scales, const int8_t* q8) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i hbits = kFifthBit ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh)) : _mm256_setzero_si256();
  __m256i isum = _mm256_setzero_si256();
  for (int c = 0; c < QK_K / 64; ++c) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * c));
    __m256i lo = _mm256_and_si256(bits, low4);
    __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low4);
    if constexpr (kFifthBit) {  // bit 2c of qh[l] tops element 64c+l, bit 2c+1 tops element 64c+32+l
      const __m256i one = _mm256_set1_epi8(1);
      lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hbits, 2 * c), one), 4));
      hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hbits, 2 * c + 1), one), 4));
    }
    const __m256i q8_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 64 * c));
    const __m256i q8_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q8 + 64 * c + 32));
    const __m256i sc_lo = _mm256_set1_epi16(static_cast<short>(scales[2 * c]));
    const __m256i sc_hi = _mm256_set1_epi16(static_cast<short>(scales[2 * c + 1]));
    const __m256i p_lo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, q8_lo), sc_lo);
    const __m256i p_hi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, q8_hi), sc_hi);
    isum = _mm256_add_epi32(isum, _mm256_add_epi32(p_lo, p_hi));
  }
  return isum;
}

template <class Block, bool kFifthBit>
float dot_q45_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps();
  float mins_total = 0.0f;
  for (int64_t b = 0; b < n / QK_K; ++b) {
    int scales[8], mins[8];
    for (int j = 0; j < 8; ++j) k_scale_min(x[b].scales, j, scales[j], mins[j]);
    const uint8_t* qh = nullptr;
    if constexpr (kFifthBit) qh = x[b].qh;
    const __m256i isum = q45_k_isum<kFifthBit>(x[b].qs, qh, scales, y[b].qs);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(x[b].d) * y[b].d), _mm256_cvtepi32_ps(isum), acc);
    mins_total = fma1(f16(x[b].dmin) * y[b].d, static_cast<float>(k_min_sum(mins, y[b].bsums)), mins_total);
  }
  return hsum(acc) - mins_total;
}

float dot_q6_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m256i low4 = _mm256_set1_epi8(0x0F), low2 = _mm256_set1_epi8(3), m32 = _mm256_set1_epi8(32);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t b = 0; b < n / QK_K; ++b) {
    __m256i isum = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {  // halves of 128 elements: 64 bytes of ql, 32 of qh, 8 scales
      const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].ql + 64 * h));
      const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].ql + 64 * h + 32));
      const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qh + 32 * h));
      // part p covers elements 32p..32p+31 of the half: low nibbles of ql0, ql1, then high nibbles,
      // topped by bits 2p..2p+1 of qh
      const __m256i low[4] = {_mm256_and_si256(ql0, low4), _mm256_and_si256(ql1, low4),
                              _mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                              _mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4)};
      for (int p = 0; p < 4; ++p) {
        const __m256i top = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * p), low2), 4);
        const __m256i q6 = _mm256_or_si256(low[p], top);
        const __m256i q8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y[b].qs + 128 * h + 32 * p));
        // (q6 - 32) * q8 as q6*q8 - 32*q8, both within int16
        const __m256i p16 = _mm256_sub_epi16(_mm256_maddubs_epi16(q6, q8), _mm256_maddubs_epi16(m32, q8));
        // the first 16 elements (8 int16 lanes) use scale 2p of the half, the next 16 scale 2p+1
        const int8_t* sc = x[b].scales + 8 * h + 2 * p;
        const __m256i scale = _mm256_set_m128i(_mm_set1_epi16(sc[1]), _mm_set1_epi16(sc[0]));
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p16, scale));
      }
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(x[b].d) * y[b].d), _mm256_cvtepi32_ps(isum), acc);
  }
  return hsum(acc);
}

constexpr DotKernel kF32{DType::F32, nullptr, dot_f32, nullptr, "avx2"};
constexpr DotKernel kF16{DType::F32, nullptr, dot_f16, nullptr, "avx2"};
constexpr DotKernel kBF16{DType::F32, nullptr, dot_bf16, nullptr, "avx2"};
constexpr DotKernel kQ5_K{DType::Q8_K, quantize_q8_k, dot_q45_k<BlockQ5_K, true>, nullptr, "avx2"};
constexpr DotKernel kQ6_K{DType::Q8_K, quantize_q8_k, dot_q6_k, nullptr, "avx2"};

}  // namespace

void quantize_q8_k(const float* x, void* dst, int64_t n) { quantize_row(DType::Q8_K, x, dst, n); }

const DotKernel* avx2_kernel(DType weight_type, ActivationPrecision activations) {
  switch (weight_type) {
    case DType::F32: return &kF32;
    case DType::F16: return &kF16;
    case DType::BF16: return &kBF16;
    default: break;
  }
  if (activations == ActivationPrecision::F32) return avx2_f32act_kernel(weight_type);
  switch (weight_type) {
    case DType::Q5_K: return &kQ5_K;
    case DType::Q6_K: return &kQ6_K;
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q8_0:
    case DType::Q4_K: return avx2_rows8_kernel(weight_type);
    default: return avx2_block_kernel(weight_type);
  }
}

}  // namespace inferscope::cpu
