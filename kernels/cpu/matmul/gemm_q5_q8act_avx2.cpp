// AVX2 kernels of Q5_0 and Q5_1, whose activations are Q8_0/Q8_1: codes multiplied
// with _mm256_maddubs_epi16 (unsigned x signed -> int16 pairs), widened with _mm256_madd_epi16, then
// one float multiply-add per block. The GEMM runs R weight rows x T tokens at once (each weight block
// unpacked once per T tokens), each output keeping its own accumulators, so every output is
// bit-identical to the single dot, which is the 1x1 tile.
#include <cstddef>
#include <cstring>

#include "kernels/cpu/avx2_common.h"

namespace inferscope::cpu {
namespace {

// 16 bytes of packed nibbles -> 32 codes 0..15: element j (low nibble of byte j) then j+16 (high nibble).
__m256i nibbles(const uint8_t* qs) {
  // the bytes in both halves; shifting the upper half's dwords right by 4 brings each high nibble down
  const __m256i both = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
  const __m256i shifted = _mm256_srlv_epi32(both, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4));
  return _mm256_and_si256(shifted, _mm256_set1_epi8(0x0F));
}

// The Q5 fifth bits (bit j of the little-endian qh word) as 0x10 in byte j, 0 elsewhere.
__m256i fifth_bits(const uint8_t* qh) {
  uint32_t bits;
  std::memcpy(&bits, qh, sizeof bits);
  // copy byte k of the word into bytes 8k..8k+7, then keep in byte i only bit (i mod 8) of it
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0x0000000000000000));
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// Sums of 4 adjacent byte products (unsigned u x signed s) in 8 int32 lanes.
__m256i dot4(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

// Per block type: how to load a weight block and an activation block, and their integer dot
// (8 int32 lanes). Scales come as (d, m) and (d, s) pairs in lanes 0 and 1 of a 128-bit vector.

// The f16 pair at p (d then m, or d then s) as floats in lanes 0 and 1, zeros above.
__m128 half_pair(const void* p) {
  uint32_t raw;
  std::memcpy(&raw, p, sizeof raw);
  return _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(raw)));
}

// A single f16 as a float in lane 0, zeros above.
__m128 half_one(f16_bits h) { return _mm_cvtph_ps(_mm_cvtsi32_si128(h)); }

// Weights stored as unsigned 5-bit codes u with value (u - kOffset) * d [+ m].
template <class Block, int kOffset, bool kHasMin>
struct UnsignedCodes {
  struct W {
    __m256i u;
    __m128 dm;  // (d, m); m = 0 without mins
  };
  static W load(const Block& x) {
    const __m256i u = _mm256_or_si256(nibbles(x.qs), fifth_bits(x.qh));
    if constexpr (kHasMin) {
      static_assert(offsetof(Block, m) == offsetof(Block, d) + 2);
      return {u, half_pair(&x.d)};
    } else {
      return {u, half_one(x.d)};
    }
  }
};

// Activations Q8_0/Q8_1: codes, and kOffset * (sum of each 4) to subtract for offset weights.
template <class ActBlock, int kOffset, bool kHasSum>
struct SignedActs {
  struct A {
    __m256i q, offset;
    __m128 ds;  // (d, s); s = 0 without sums
  };
  static A load(const ActBlock& y) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.qs));
    __m256i offset = _mm256_setzero_si256();
    if constexpr (kOffset != 0) offset = dot4(_mm256_set1_epi8(kOffset), q);
    if constexpr (kHasSum) {
      static_assert(offsetof(ActBlock, s) == offsetof(ActBlock, d) + 2);
      return {q, offset, half_pair(&y.d)};
    } else {
      return {q, offset, half_one(y.d)};
    }
  }
};

template <class WBlock, class ABlock, int kOffset, bool kHasMin>
struct OffsetPolicy {
  using WeightBlock = WBlock;
  using ActBlock = ABlock;
  static constexpr bool kMin = kHasMin;
  using Wt = UnsignedCodes<WBlock, kOffset, kHasMin>;
  using Ac = SignedActs<ABlock, kOffset, kHasMin>;
  using W = typename Wt::W;
  using A = typename Ac::A;
  static W load_w(const WBlock& x) { return Wt::load(x); }
  static A load_a(const ABlock& y) { return Ac::load(y); }
  // sum (u - kOffset) * q = sum u*q - kOffset * sum q, exact in int32
  static __m256i idot(const W& w, const A& a) {
    const __m256i p = dot4(w.u, a.q);
    return kOffset == 0 ? p : _mm256_sub_epi32(p, a.offset);
  }
};

using Q5_0Policy = OffsetPolicy<BlockQ5_0, BlockQ8_0, 16, false>;
using Q5_1Policy = OffsetPolicy<BlockQ5_1, BlockQ8_1, 0, true>;

// The mins term of a tile, m_r * s_t summed over the blocks for every (row r, token t) pair, kept in
// the lanes of one vector: one fma per block instead of one per pair. Lane of pair (r, t): r*T + t,
// except for a single token, where the weight pairs unpack to (d0, d1, m0, m1) and lane 2 + r serves.
template <int R, int T>
struct TileMins {
  static_assert(R <= 2 && T <= 4);
  static int lane(int r, int t) { return T == 1 ? 2 + r : r * T + t; }

  // dm: (d, m) of each row's block; ds: (d, s) of each token's block.
  static __m256 add(const __m128* dm, const __m128* ds, __m256 mins) {
    const __m128 zero = _mm_setzero_ps();
    const __m128 rows = _mm_unpacklo_ps(dm[0], R > 1 ? dm[R - 1] : zero);  // (d0, d1, m0, m1)
    if constexpr (T == 1) {
      const __m128 s = _mm_permute_ps(ds[0], 0x55);  // s in every lane
      return _mm256_zextps128_ps256(_mm_fmadd_ps(rows, s, _mm256_castps256_ps128(mins)));
    } else {
      // tokens' s values (s0, s1, s2, s3) from (d0, d1, s0, s1) and (d2, d3, s2, s3)
      const __m128 t01 = _mm_unpacklo_ps(ds[0], ds[1]);
      // (the index clamps only keep the unused branches of small T in bounds)
      const __m128 t23 = _mm_unpacklo_ps(T > 2 ? ds[T > 2 ? 2 : 0] : zero, T > 3 ? ds[T - 1] : zero);
      const __m128 s = _mm_movehl_ps(t23, t01);
      // lane i takes m of row i / T and s of token i % T
      const __m256 m_lanes = _mm256_permutevar8x32_ps(
          _mm256_zextps128_ps256(rows), _mm256_setr_epi32(2 + 0 / T, 2 + 1 / T, 2 + 2 / T, 2 + 3 / T, 2 + 4 / T,
                                                          2 + 5 / T, 2 + 6 / T, 2 + 7 / T));
      const __m256 s_lanes = _mm256_permutevar8x32_ps(
          _mm256_zextps128_ps256(s), _mm256_setr_epi32(0 % T, 1 % T, 2 % T, 3 % T, 4 % T, 5 % T, 6 % T, 7 % T));
      return _mm256_fmadd_ps(m_lanes, s_lanes, mins);
    }
  }
};

// R weight rows x T tokens over nb blocks. Per output and block:
//   acc = fma(float(isum), dw * da, acc) in 8 lanes,  min = fma(m, s, min)  (types with mins)
// and output = hsum(acc) + min. Every output sees exactly these operations whatever R and T are.
template <class P, int R, int T>
void gemm_tile(const uint8_t* w, size_t w_stride, const uint8_t* a, size_t a_stride, int64_t nb, float* out,
               int64_t out_stride) {
  using WB = typename P::WeightBlock;
  using AB = typename P::ActBlock;
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  __m256 mins = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    typename P::W wr[R];
    typename P::A at[T];
    for (int r = 0; r < R; ++r) wr[r] = P::load_w(reinterpret_cast<const WB*>(w + r * w_stride)[b]);
    for (int t = 0; t < T; ++t) at[t] = P::load_a(reinterpret_cast<const AB*>(a + t * a_stride)[b]);
    if constexpr (P::kMin) {
      __m128 dm[R], ds[T];
      for (int r = 0; r < R; ++r) dm[r] = wr[r].dm;
      for (int t = 0; t < T; ++t) ds[t] = at[t].ds;
      mins = TileMins<R, T>::add(dm, ds, mins);
    }
    __m256 dw[R];
    for (int r = 0; r < R; ++r) dw[r] = _mm256_broadcastss_ps(wr[r].dm);
    for (int t = 0; t < T; ++t) {
      const __m256 da = _mm256_broadcastss_ps(at[t].ds);
      for (int r = 0; r < R; ++r) {
        const __m256 sums = _mm256_cvtepi32_ps(P::idot(wr[r], at[t]));
        acc[r][t] = _mm256_fmadd_ps(sums, _mm256_mul_ps(dw[r], da), acc[r][t]);
      }
    }
  }
  alignas(32) float min_lanes[8];
  _mm256_store_ps(min_lanes, mins);
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) {
      out[t * out_stride + r] = hsum(acc[r][t]);
      if constexpr (P::kMin) out[t * out_stride + r] += min_lanes[TileMins<R, T>::lane(r, t)];
    }
}

// Rows per tile and tokens per tile: 8 accumulators leave room for codes and scales in 16 registers.
constexpr int kTileRows = 2;
constexpr int kTileTokens = 4;

// One strip of n_tok (at most kTileTokens) tokens over R rows.
template <class P, int R>
void gemm_strip(const uint8_t* w, size_t w_stride, const uint8_t* a, size_t a_stride, int64_t n_tok, int64_t nb,
                float* out, int64_t out_stride) {
  switch (n_tok) {
    case 1: gemm_tile<P, R, 1>(w, w_stride, a, a_stride, nb, out, out_stride); break;
    case 2: gemm_tile<P, R, 2>(w, w_stride, a, a_stride, nb, out, out_stride); break;
    case 3: gemm_tile<P, R, 3>(w, w_stride, a, a_stride, nb, out, out_stride); break;
    default: gemm_tile<P, R, kTileTokens>(w, w_stride, a, a_stride, nb, out, out_stride); break;
  }
}

template <class P>
void gemm_blocks(const void* w, size_t w_stride, int64_t n_rows, const void* a, size_t a_stride, int64_t n_tok,
                 int64_t n, float* out, int64_t out_stride) {
  const auto* wb = static_cast<const uint8_t*>(w);
  const auto* ab = static_cast<const uint8_t*>(a);
  const int64_t nb = n / 32;
  // tokens outer, rows inner: the caller's few rows stay in L1 while the tokens stream past
  for (int64_t t = 0; t < n_tok; t += kTileTokens) {
    const int64_t nt = n_tok - t < kTileTokens ? n_tok - t : kTileTokens;
    const uint8_t* at = ab + t * a_stride;
    float* ot = out + t * out_stride;
    int64_t r = 0;
    for (; r + kTileRows <= n_rows; r += kTileRows)
      gemm_strip<P, kTileRows>(wb + r * w_stride, w_stride, at, a_stride, nt, nb, ot + r, out_stride);
    for (; r < n_rows; ++r) gemm_strip<P, 1>(wb + r * w_stride, w_stride, at, a_stride, nt, nb, ot + r, out_stride);
  }
}

template <class P>
float dot_blocks(const void* w, const void* a, int64_t n) {
  float out;
  gemm_tile<P, 1, 1>(static_cast<const uint8_t*>(w), 0, static_cast<const uint8_t*>(a), 0, n / 32, &out, 0);
  return out;
}

template <class P, DType kAct, QuantizeFn kQuantize>
constexpr DotKernel kernel{kAct, kQuantize, dot_blocks<P>, gemm_blocks<P>, "avx2"};

constexpr const DotKernel& kQ5_0 = kernel<Q5_0Policy, DType::Q8_0, quantize_q8_0_avx2>;
constexpr const DotKernel& kQ5_1 = kernel<Q5_1Policy, DType::Q8_1, quantize_q8_1_avx2>;

}  // namespace

const DotKernel* avx2_block_kernel(DType weight_type) {
  switch (weight_type) {
    case DType::Q5_0: return &kQ5_0;
    case DType::Q5_1: return &kQ5_1;
    default: return nullptr;
  }
}

}  // namespace inferscope::cpu
