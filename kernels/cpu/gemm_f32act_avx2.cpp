// AVX2 kernels of Q5_0, Q5_1 and Q5_K with f32 activations ("weight-only quantization"). A weight
// block is dequantized 8 elements (one chunk) at a time, exactly: every value is an exact product
// (code x f16 scale) plus at most one add rounded once, as in dequantize_row. Every output (weight
// row r, token t) is then
//   acc = 0;  for each chunk c in order: acc = fma(w_r[c], x_t[c], acc);  y = hsum(acc)
// whatever the tile. The GEMM runs R rows x T tokens (R * T = 8 accumulators), dequantizing each
// weight chunk once for its T tokens, so every output is bit-identical to the single dot (1x1 tile).
#include <cstddef>
#include <cstring>

#include "kernels/cpu/avx2_common.h"

namespace inferscope::cpu {
namespace {

// The 8 bytes at p, zero-extended to 8 int32 lanes.
__m256i bytes8(const uint8_t* p) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}

// 4-bit codes of elements 8c..8c+7 of a 32-element block (qs[j] holds element j low, j+16 high).
__m256i nibble_chunk(const uint8_t* qs, int c) {
  const __m256i b = bytes8(qs + 8 * (c & 1));
  return c < 2 ? _mm256_and_si256(b, _mm256_set1_epi32(0xF)) : _mm256_srli_epi32(b, 4);
}

// Bits 8c..8c+7 of a Q5 qh word as the value 16 (the codes' fifth bit) in lanes 0..7.
__m256i fifth_chunk(uint32_t qh, int c) {
  const __m256i bits =
      _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(qh >> (8 * c))), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  return _mm256_slli_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(1)), 4);
}

// Per type: State load(block) reads the scales once per block; chunk(block, state, c) returns the
// 8 dequantized values of chunk c (of kChunks).

// Q5_0, Q5_1: x = (q - kOffset) * d [+ m], q = a nibble and a fifth bit from qh. (Q4_0, Q4_1, Q8_0,
// Q4_K and Q6_K have the packed-row kernels of gemm_rows8_f32act_avx2.cpp.)
template <class B, int kOffset, bool kHasMin>
struct Codes32 {
  using Block = B;
  static constexpr int kChunks = 4;
  struct State {
    __m256 d, m;
    uint32_t qh;
  };
  static State load(const B& x) {
    State s{};
    if constexpr (kHasMin) {  // d and m are adjacent: convert both with one vcvtph2ps
      static_assert(offsetof(B, m) == offsetof(B, d) + 2);
      uint32_t raw;
      std::memcpy(&raw, &x.d, sizeof raw);
      const __m128 dm = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(raw)));
      s.d = _mm256_broadcastss_ps(dm);
      s.m = _mm256_broadcastss_ps(_mm_movehdup_ps(dm));
    } else {
      s.d = _mm256_set1_ps(f16(x.d));
    }
    std::memcpy(&s.qh, x.qh, sizeof s.qh);
    return s;
  }
  static __m256 chunk(const B& x, const State& s, int c) {
    __m256i q = _mm256_or_si256(nibble_chunk(x.qs, c), fifth_chunk(s.qh, c));
    if constexpr (kOffset != 0) q = _mm256_sub_epi32(q, _mm256_set1_epi32(kOffset));
    const __m256 qf = _mm256_cvtepi32_ps(q);
    // q * d is exact, so the fma rounds the sum once, as q * d + m does
    if constexpr (kHasMin) return _mm256_fmadd_ps(qf, s.d, s.m);
    return _mm256_mul_ps(qf, s.d);
  }
};

using Q5_0 = Codes32<BlockQ5_0, 16, false>;
using Q5_1 = Codes32<BlockQ5_1, 0, true>;

// Q5_K: chunk c lies in sub-block j = c / 4, x = (d * scale_j) * q - dmin * min_j; both products are
// exact, so one fma gives dequantize_row's value.
struct Q5_K {
  using Block = BlockQ5_K;
  static constexpr int kChunks = QK_K / 8;
  struct State {
    alignas(32) float scale[8];  // d * scale_j
    alignas(32) float neg_min[8];  // -(dmin * min_j)
  };
  static State load(const BlockQ5_K& x) {
    // the 6-bit scales and mins of sub-blocks 0..3 and 4..7 as bytes, four to a word (as k_scale_min)
    uint32_t u[3];
    std::memcpy(u, x.scales, sizeof u);
    const uint32_t top2 = 0x03030303;
    const __m128i scales = _mm_setr_epi32(static_cast<int>(u[0] & 0x3f3f3f3f),
                                          static_cast<int>((u[2] & 0x0f0f0f0f) | (((u[0] >> 6) & top2) << 4)), 0, 0);
    const __m128i mins = _mm_setr_epi32(static_cast<int>(u[1] & 0x3f3f3f3f),
                                        static_cast<int>(((u[2] >> 4) & 0x0f0f0f0f) | (((u[1] >> 6) & top2) << 4)), 0, 0);
    State s;
    _mm256_store_ps(s.scale, _mm256_mul_ps(_mm256_set1_ps(f16(x.d)), _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(scales))));
    const __m256 min = _mm256_mul_ps(_mm256_set1_ps(f16(x.dmin)), _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(mins)));
    _mm256_store_ps(s.neg_min, _mm256_xor_ps(min, _mm256_set1_ps(-0.0f)));
    return s;
  }
  static __m256 chunk(const BlockQ5_K& x, const State& s, int c) {
    const int j = c / 4, l = 8 * (c % 4);
    // even sub-blocks take the low nibbles of qs[32 * (j / 2) + l], odd ones the high nibbles (a shift
    // by 0 or 4: j varies within the unrolled loop)
    const __m256i b = bytes8(x.qs + 32 * (j / 2) + l);
    const __m256i low = _mm256_and_si256(_mm256_srlv_epi32(b, _mm256_set1_epi32(4 * (j % 2))), _mm256_set1_epi32(0xF));
    // bit j of qh[l] is the fifth bit of element 32j + l
    const __m256i top = _mm256_and_si256(_mm256_srli_epi32(bytes8(x.qh + l), j), _mm256_set1_epi32(1));
    const __m256i q = _mm256_or_si256(low, _mm256_slli_epi32(top, 4));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(q), _mm256_broadcast_ss(&s.scale[j]), _mm256_broadcast_ss(&s.neg_min[j]));
  }
};

// acc[t] = fma(chunk c of a row's block, token t's elements of that chunk, acc[t]) for the T tokens.
template <class P, int T>
__attribute__((always_inline)) inline void multiply_chunk(const typename P::Block& block, const typename P::State& s,
                                                          int c, const float* xc, size_t x_stride, __m256 (&acc)[T]) {
  const __m256 wc = P::chunk(block, s, c);
#pragma GCC unroll 8
  for (int t = 0; t < T; ++t) acc[t] = _mm256_fmadd_ps(wc, _mm256_loadu_ps(xc + t * x_stride), acc[t]);
}

// R weight rows x T tokens over nb blocks; x rows are x_stride floats apart. The loops are unrolled
// (by 4 over chunks, so that a chunk's place in its 32-element block or sub-block is a constant), so
// that the accumulators live in registers.
template <class P, int R, int T>
void gemm_tile(const uint8_t* w, size_t w_stride, const float* x, size_t x_stride, int64_t nb, float* out,
               int64_t out_stride) {
  using B = typename P::Block;
  constexpr int64_t kBlockSize = 8 * P::kChunks;
  __m256 acc[R][T];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = x + b * kBlockSize;
    const B* block[R];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      block[r] = reinterpret_cast<const B*>(w + r * w_stride) + b;
      // the same block R rows on is the next tile's: start reading it from memory now
      for (size_t off = 0; off < sizeof(B); off += 64)
        _mm_prefetch(reinterpret_cast<const char*>(block[r]) + R * w_stride + off, _MM_HINT_T0);
    }
    if constexpr (P::kChunks <= 4) {
      // a 32-element block: row by row (its four chunks, then the next row's)
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const typename P::State s = P::load(*block[r]);
#pragma GCC unroll 4
        for (int c = 0; c < P::kChunks; ++c) multiply_chunk<P, T>(*block[r], s, c, xb + 8 * c, x_stride, acc[r]);
      }
    } else {
      // a 256-element K-quant block: chunk by chunk across the rows, so that R * T independent fma
      // chains are in flight (one row's 32 chunks alone would wait on one chain: 3x slower)
      typename P::State s[R];
      for (int r = 0; r < R; ++r) s[r] = P::load(*block[r]);
#pragma GCC unroll 4
      for (int c = 0; c < P::kChunks; ++c)
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) multiply_chunk<P, T>(*block[r], s[r], c, xb + 8 * c, x_stride, acc[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) out[t * out_stride + r] = hsum(acc[r][t]);
}

// T tokens over n_rows rows, in tiles of 8 / T rows (at most 8 accumulators), then single rows.
template <class P, int T>
void gemm_strip(const uint8_t* w, size_t w_stride, int64_t n_rows, const float* x, size_t x_stride, int64_t nb,
                float* out, int64_t out_stride) {
  constexpr int R = 8 / T;
  int64_t r = 0;
  for (; r + R <= n_rows; r += R)
    gemm_tile<P, R, T>(w + r * w_stride, w_stride, x, x_stride, nb, out + r, out_stride);
  for (; r < n_rows; ++r) gemm_tile<P, 1, T>(w + r * w_stride, w_stride, x, x_stride, nb, out + r, out_stride);
}

// One strip of n_tok (1..8) tokens: the tile that dequantizes each weight chunk once for all of them.
template <class P>
void gemm_strip_any(const uint8_t* w, size_t w_stride, int64_t n_rows, const float* x, size_t x_stride, int64_t nb,
                    int64_t n_tok, float* out, int64_t out_stride) {
  switch (n_tok) {
    case 1: gemm_strip<P, 1>(w, w_stride, n_rows, x, x_stride, nb, out, out_stride); break;
    case 2: gemm_strip<P, 2>(w, w_stride, n_rows, x, x_stride, nb, out, out_stride); break;
    case 3: gemm_strip<P, 3>(w, w_stride, n_rows, x, x_stride, nb, out, out_stride); break;
    case 4: gemm_strip<P, 4>(w, w_stride, n_rows, x, x_stride, nb, out, out_stride); break;
    case 5: gemm_strip<P, 5>(w, w_stride, n_rows, x, x_stride, nb, out, out_stride); break;
    case 6: gemm_strip<P, 6>(w, w_stride, n_rows, x, x_stride, nb, out, out_stride); break;
    case 7: gemm_strip<P, 7>(w, w_stride, n_rows, x, x_stride, nb, out, out_stride); break;
    default: gemm_strip<P, 8>(w, w_stride, n_rows, x, x_stride, nb, out, out_stride); break;
  }
}

template <class P>
void gemm_f32act(const void* w, size_t w_stride, int64_t n_rows, const void* a, size_t a_stride, int64_t n_tok,
                 int64_t n, float* out, int64_t out_stride) {
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* x = static_cast<const float*>(a);
  const size_t x_stride = a_stride / sizeof(float);
  const int64_t nb = n / (8 * P::kChunks);
  // strips of 8 tokens and one of the 1..7 left, so a speculative verify of k + 1 <= 8 tokens reads
  // and dequantizes the weights once (the tile never changes an output's operations)
  for (int64_t t = 0; t < n_tok; t += 8) {
    const int64_t strip = n_tok - t < 8 ? n_tok - t : 8;
    gemm_strip_any<P>(wb, w_stride, n_rows, x + t * x_stride, x_stride, nb, strip, out + t * out_stride, out_stride);
  }
}

template <class P>
float dot_f32act(const void* w, const void* a, int64_t n) {
  float out;
  gemm_tile<P, 1, 1>(static_cast<const uint8_t*>(w), 0, static_cast<const float*>(a), 0, n / (8 * P::kChunks), &out,
                     0);
  return out;
}

template <class P>
constexpr DotKernel kernel{DType::F32, nullptr, dot_f32act<P>, gemm_f32act<P>, "avx2"};

}  // namespace

const DotKernel* avx2_f32act_kernel(DType weight_type) {
  switch (weight_type) {
    case DType::Q8_0:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q4_K:
    case DType::Q6_K: return avx2_rows8_f32act_kernel(weight_type);
    case DType::Q5_0: return &kernel<Q5_0>;
    case DType::Q5_1: return &kernel<Q5_1>;
    case DType::Q5_K: return &kernel<Q5_K>;
    default: return nullptr;
  }
}

}  // namespace inferscope::cpu
