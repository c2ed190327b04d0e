// Internal to the *_avx2.cpp files (compiled with -mavx2 -mfma -mf16c): small shared helpers.
// Everything here is static, and those files use no std:: templates: the linker could otherwise pick
// an AVX2-compiled copy of an inline function for the scalar family too.
#pragma once
#include <immintrin.h>

#include "kernels/format/quant_blocks.h"
#include "kernels/cpu/matmul/vec_dot.h"

namespace inferscope::cpu {

// Fixed-tree horizontal sum: (lo128 + hi128), then lanes (0+2, 1+3), then (0 + 1).
static inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

static inline float f16(f16_bits h) { return _cvtsh_ss(h); }

// Eight f16 values as floats.
static inline __m256 halves8(const f16_bits* h) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h)));
}

// The weights prefetch_distance<Block> bytes past a packed block, requested now (packed_rows.h): with
// the hardware prefetcher alone, two cores streaming packed groups from memory read 5-18% slower.
// The K-quant blocks (1 KiB and more, the most work per byte) go 12 KiB ahead into L2 only: on the 1B
// Q4_K_M file in 2 MiB pages that decoded 19% faster on two cores than 2 KiB ahead into L1, and 2 KiB
// had beaten 4 KiB (into L1; perhaps because 4 KiB ahead is the same L1 set). The others go 4 KiB
// ahead into L1.
template <class Block>
constexpr bool prefetch_into_l2_only() { return sizeof(Block) >= 1024; }
template <class Block>
constexpr size_t prefetch_distance() { return prefetch_into_l2_only<Block>() ? 12288 : 4096; }
template <class Block>
static inline void prefetch_ahead(const Block& wb) {
  const char* ahead = reinterpret_cast<const char*>(&wb) + prefetch_distance<Block>();
  for (size_t off = 0; off < sizeof(Block); off += 64) {
    if constexpr (prefetch_into_l2_only<Block>())
      _mm_prefetch(ahead + off, _MM_HINT_T1);
    else
      _mm_prefetch(ahead + off, _MM_HINT_T0);
  }
}

// a * b + c with one rounding (an intrinsic, so no libm or std:: inline is involved).
static inline float fma1(float a, float b, float c) {
  return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
}

// quantize_row() to Q8_0 / Q8_1 / Q8_K, byte for byte, eight elements at a time (quantize_avx2.cpp).
void quantize_q8_0_avx2(const float* x, void* dst, int64_t n);
void quantize_q8_1_avx2(const float* x, void* dst, int64_t n);
void quantize_q8_k_avx2(const float* x, void* dst, int64_t n);

// The AVX2 int8-activation kernels of Q5_0 and Q5_1, with tiled GEMMs (gemm_q5_q8act_avx2.cpp).
const DotKernel* avx2_block_kernel(DType weight_type);

// The AVX2 int8-activation kernels of Q4_0, Q4_1, Q8_0, Q4_K and Q6_K, one row per lane over rows packed
// eight at a time (gemm_rows8_q8act_avx2.cpp).
const DotKernel* avx2_rows8_kernel(DType weight_type);
// The same kernels compiled for AVX-512VL with VNNI (gemm_rows8_q8act_avx512vnni.cpp); call only when
// use_avx512vl() and the CPU has AVX-512 VNNI (CpuFeatures::runs_avx512vnni_kernels).
const DotKernel* avx512vnni_rows8_kernel(DType weight_type);

// The AVX2 f32-activation kernels of the quantized types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K,
// Q6_K), one row per lane over rows packed eight at a time (gemm_rows8_f32act_avx2.cpp); nullptr for
// the others.
const DotKernel* avx2_rows8_f32act_kernel(DType weight_type);
// The same kernels compiled for AVX-512VL (gemm_rows8_f32act_avx512vl.cpp); call only when use_avx512vl().
const DotKernel* avx512vl_rows8_f32act_kernel(DType weight_type);

}  // namespace inferscope::cpu
