// AVX2/FMA/F16C dot products of the float types and of Q5_K with Q8_K activations (compiled
// with -mavx2 -mfma -mf16c; run only when use_avx2()); the other int8-activation kernels live in
// gemm_rows8_q8act_avx2.cpp (Q4_0, Q4_1, Q8_0, Q4_K, Q6_K) and gemm_q5_q8act_avx2.cpp (Q5_0, Q5_1), the
// f32-activation kernels of the quantized types in gemm_rows8_f32act_avx2.cpp (the packed-row ones
// also built for AVX-512: gemm_rows8_q8act_avx512vnni.cpp, gemm_rows8_f32act_avx512vl.cpp).
#include <cstring>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/cpu_features.h"

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

// ---- Q5_K x Q8_K: one super-block of 256 at a time, integer sums weighted by the 6-bit sub-block
// scales in int32, then one fma per super-block.

// The mins term of Q5_K: sum over sub-blocks j of min_j * (sum of its 32 activation codes).
int32_t k_min_sum(const int* mins, const int16_t* bsums) {
  int32_t msum = 0;
  for (int j = 0; j < 8; ++j) msum += mins[j] * (bsums[2 * j] + bsums[2 * j + 1]);
  return msum;
}

__m256i q5_k_isum(const uint8_t* qs, const uint8_t* qh, const int* scales, const int8_t* q8) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
  const __m256i hbits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
  __m256i isum = _mm256_setzero_si256();
  for (int c = 0; c < QK_K / 64; ++c) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * c));
    __m256i lo = _mm256_and_si256(bits, low4);
    __m256i hi = _mm256_and_si256(_mm256_srli_epi16(bits, 4), low4);
    // bit 2c of qh[l] tops element 64c+l, bit 2c+1 tops element 64c+32+l
    lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hbits, 2 * c), one), 4));
    hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hbits, 2 * c + 1), one), 4));
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

float dot_q5_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ5_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps();
  float mins_total = 0.0f;
  for (int64_t b = 0; b < n / QK_K; ++b) {
    int scales[8], mins[8];
    for (int j = 0; j < 8; ++j) k_scale_min(x[b].scales, j, scales[j], mins[j]);
    const __m256i isum = q5_k_isum(x[b].qs, x[b].qh, scales, y[b].qs);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(x[b].d) * y[b].d), _mm256_cvtepi32_ps(isum), acc);
    mins_total = fma1(f16(x[b].dmin) * y[b].d, static_cast<float>(k_min_sum(mins, y[b].bsums)), mins_total);
  }
  return hsum(acc) - mins_total;
}

constexpr DotKernel kF32{DType::F32, nullptr, dot_f32, nullptr, "avx2"};
constexpr DotKernel kF16{DType::F32, nullptr, dot_f16, nullptr, "avx2"};
constexpr DotKernel kBF16{DType::F32, nullptr, dot_bf16, nullptr, "avx2"};
constexpr DotKernel kQ5_K{DType::Q8_K, quantize_q8_k_avx2, dot_q5_k, nullptr, "avx2"};

}  // namespace

const DotKernel* avx2_kernel(DType weight_type, ActivationPrecision activations) {
  switch (weight_type) {
    case DType::F32: return &kF32;
    case DType::F16: return &kF16;
    case DType::BF16: return &kBF16;
    default: break;
  }
  if (activations == ActivationPrecision::F32) return avx2_rows8_f32act_kernel(weight_type);
  switch (weight_type) {
    case DType::Q5_K: return &kQ5_K;
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q8_0:
    case DType::Q4_K:
    case DType::Q6_K: return avx2_rows8_kernel(weight_type);
    default: return avx2_block_kernel(weight_type);
  }
}

const DotKernel* avx512_kernel(DType weight_type, ActivationPrecision activations) {
  const DotKernel* k = activations == ActivationPrecision::F32 ? avx512vl_rows8_f32act_kernel(weight_type)
                       : cpu_features().runs_avx512vnni_kernels() ? avx512vnni_rows8_kernel(weight_type)
                                                                  : nullptr;
  return k != nullptr ? k : avx2_kernel(weight_type, activations);
}

}  // namespace inferscope::cpu
