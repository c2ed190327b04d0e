// AVX2 kernels of the quantized types with f32 activations ("weight-only quantization"). A weight
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

// Q4_0, Q4_1, Q5_0, Q5_1: x = (q - kOffset) * d [+ m].
template <class B, int kOffset, bool kHasMin, bool kFifthBit>
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
    if constexpr (kFifthBit) std::memcpy(&s.qh, x.qh, sizeof s.qh);
    return s;
  }
  static __m256 chunk(const B& x, const State& s, int c) {
    __m256i q = nibble_chunk(x.qs, c);
    if constexpr (kFifthBit) q = _mm256_or_si256(q, fifth_chunk(s.qh, c));
    if constexpr (kOffset != 0) q = _mm256_sub_epi32(q, _mm256_set1_epi32(kOffset));
    const __m256 qf = _mm256_cvtepi32_ps(q);
    // q * d is exact, so the fma rounds the sum once, as q * d + m does
    if constexpr (kHasMin) return _mm256_fmadd_ps(qf, s.d, s.m);
    return _mm256_mul_ps(qf, s.d);
  }
};

using Q4_0 = Codes32<BlockQ4_0, 8, false, false>;
using Q4_1 = Codes32<BlockQ4_1, 0, true, false>;
using Q5_0 = Codes32<BlockQ5_0, 16, false, true>;
using Q5_1 = Codes32<BlockQ5_1, 0, true, true>;

// x = q * d, q signed 8-bit.
struct Q8_0 {
  using Block = BlockQ8_0;
  static constexpr int kChunks = 4;
  struct State {
    __m256 d;
  };
  static State load(const BlockQ8_0& x) { return {_mm256_set1_ps(f16(x.d))}; }
  static __m256 chunk(const BlockQ8_0& x, const State& s, int c) {
    const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x.qs + 8 * c)));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(q), s.d);
  }
};

// Q4_K, Q5_K: chunk c lies in sub-block j = c / 4, x = (d * scale_j) * q - dmin * min_j; both products
// are exact, so one fma gives dequantize_row's value.
template <class B, bool kFifthBit>
struct Codes45K {
  using Block = B;
  static constexpr int kChunks = QK_K / 8;
  struct State {
    float scale[8], neg_min[8];  // d * scale_j and -(dmin * min_j)
  };
  static State load(const B& x) {
    State s;
    const float d = f16(x.d), dmin = f16(x.dmin);
    for (int j = 0; j < 8; ++j) {
      int sc, mn;
      k_scale_min(x.scales, j, sc, mn);
      s.scale[j] = d * static_cast<float>(sc);
      s.neg_min[j] = -(dmin * static_cast<float>(mn));
    }
    return s;
  }
  static __m256 chunk(const B& x, const State& s, int c) {
    const int j = c / 4, l = 8 * (c % 4);
    // even sub-blocks take the low nibbles of qs[32 * (j / 2) + l], odd ones the high nibbles
    const __m256i b = bytes8(x.qs + 32 * (j / 2) + l);
    __m256i q = j % 2 == 0 ? _mm256_and_si256(b, _mm256_set1_epi32(0xF)) : _mm256_srli_epi32(b, 4);
    if constexpr (kFifthBit) {  // bit j of qh[l] is the fifth bit of element 32j + l
      const __m256i top = _mm256_and_si256(_mm256_srli_epi32(bytes8(x.qh + l), j), _mm256_set1_epi32(1));
      q = _mm256_or_si256(q, _mm256_slli_epi32(top, 4));
    }
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(s.scale[j]), _mm256_set1_ps(s.neg_min[j]));
  }
};

using Q4_K = Codes45K<BlockQ4_K, false>;
using Q5_K = Codes45K<BlockQ5_K, true>;

// Q6_K: element e = 128h + 32k + l (see BlockQ6_K), x = (d * scales[e / 16]) * (q - 32), exact.
struct Q6_K {
  using Block = BlockQ6_K;
  static constexpr int kChunks = QK_K / 8;
  struct State {
    float scale[QK_K / 16];  // d * scales[i]
  };
  static State load(const BlockQ6_K& x) {
    State s;
    const float d = f16(x.d);
    for (int i = 0; i < QK_K / 16; ++i) s.scale[i] = d * static_cast<float>(x.scales[i]);
    return s;
  }
  static __m256 chunk(const BlockQ6_K& x, const State& s, int c) {
    const int h = c / 16, k = (c / 4) % 4, l = 8 * (c % 4);
    const __m256i b = bytes8(x.ql + 64 * h + 32 * (k % 2) + l);
    const __m256i low = k < 2 ? _mm256_and_si256(b, _mm256_set1_epi32(0xF)) : _mm256_srli_epi32(b, 4);
    const __m256i high = _mm256_and_si256(_mm256_srli_epi32(bytes8(x.qh + 32 * h + l), 2 * k), _mm256_set1_epi32(3));
    const __m256i q = _mm256_sub_epi32(_mm256_or_si256(low, _mm256_slli_epi32(high, 4)), _mm256_set1_epi32(32));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(s.scale[c / 2]));
  }
};

// R weight rows x T tokens over nb blocks; x rows are x_stride floats apart.
template <class P, int R, int T>
void gemm_tile(const uint8_t* w, size_t w_stride, const float* x, size_t x_stride, int64_t nb, float* out,
               int64_t out_stride) {
  using B = typename P::Block;
  constexpr int64_t kBlockSize = 8 * P::kChunks;
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    // unrolled, so that the accumulators live in registers
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const B& block = reinterpret_cast<const B*>(w + r * w_stride)[b];
      // the same block R rows on is the next tile's: start reading it from memory now
      _mm_prefetch(reinterpret_cast<const char*>(&block) + R * w_stride, _MM_HINT_T0);
      const typename P::State s = P::load(block);
#pragma GCC unroll 4
      for (int c = 0; c < P::kChunks; ++c) {
        const __m256 wc = P::chunk(block, s, c);
        const float* xc = x + b * kBlockSize + 8 * c;
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(wc, _mm256_loadu_ps(xc + t * x_stride), acc[r][t]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
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
    case DType::Q8_0: return &kernel<Q8_0>;
    case DType::Q4_0: return &kernel<Q4_0>;
    case DType::Q4_1: return &kernel<Q4_1>;
    case DType::Q5_0: return &kernel<Q5_0>;
    case DType::Q5_1: return &kernel<Q5_1>;
    case DType::Q4_K: return &kernel<Q4_K>;
    case DType::Q5_K: return &kernel<Q5_K>;
    case DType::Q6_K: return &kernel<Q6_K>;
    default: return nullptr;
  }
}

}  // namespace inferscope::cpu
