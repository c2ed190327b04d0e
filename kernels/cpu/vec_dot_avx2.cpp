// AVX2/FMA/F16C dot products (compiled with -mavx2 -mfma -mf16c; run only when use_avx2()).
// Integer paths multiply 8-bit codes with _mm256_maddubs_epi16 (unsigned x signed -> int16 pairs)
// and widen with _mm256_madd_epi16, then scale each block's int32 sums once in float.
// The 32-element block types also have a tiled GEMM: R weight rows x T tokens at once, each output
// keeping its own accumulators, so every output is bit-identical to the single dot (the 1x1 tile).
// No std:: templates here: an inline function instantiated with AVX2 flags could be picked by the
// linker for the scalar family too.
#include <immintrin.h>

#include <cstddef>
#include <cstring>

#include "kernels/cpu/quant_blocks.h"
#include "kernels/cpu/vec_dot.h"

namespace inferscope::cpu {
namespace {

// Fixed-tree horizontal sum: (lo128 + hi128), then lanes (0+2, 1+3), then (0 + 1).
float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

float f16(f16_bits h) { return _cvtsh_ss(h); }

// a * b + c with one rounding (an intrinsic, so no libm or std:: inline is involved).
float fma1(float a, float b, float c) {
  return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
}

// 16 bytes of packed nibbles -> 32 codes 0..15: element j (low nibble of byte j) then j+16 (high nibble).
__m256i nibbles(const uint8_t* qs) {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
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

// ---- 32-element block types: how to load a weight block and an activation block, and their
// integer dot (8 int32 lanes). The float part is shared by gemm_tile below.

// The f16 pair at p (d then m, or d then s) as floats in lanes 0 and 1 of an otherwise zero vector;
// keep_mask 0xFFFF0000 zeroes the first of the two.
__m256 half_pair(const void* p, uint32_t keep_mask) {
  uint32_t raw;
  std::memcpy(&raw, p, sizeof raw);
  return _mm256_zextps128_ps256(_mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(raw & keep_mask))));
}

__m256 broadcast_lane0(__m256 v) { return _mm256_broadcastss_ps(_mm256_castps256_ps128(v)); }

// Weights stored as unsigned codes u with value (u - kOffset) * d [+ m].
template <class Block, int kOffset, bool kHasMin, bool kFifthBit>
struct UnsignedCodes {
  struct W {
    __m256i u;
    __m256 d;  // d in every lane
    __m256 m;  // m in lane 1, zero elsewhere (kHasMin only)
  };
  static W load(const Block& x) {
    __m256i u = nibbles(x.qs);
    if constexpr (kFifthBit) u = _mm256_or_si256(u, fifth_bits(x.qh));
    if constexpr (kHasMin) {
      static_assert(offsetof(Block, m) == offsetof(Block, d) + 2);
      return {u, broadcast_lane0(half_pair(&x.d, 0xFFFFFFFFu)), half_pair(&x.d, 0xFFFF0000u)};
    } else {
      return {u, _mm256_set1_ps(f16(x.d)), _mm256_setzero_ps()};
    }
  }
};

// Activations Q8_0/Q8_1: codes, and kOffset * (sum of each 4) to subtract for offset weights.
template <class ActBlock, int kOffset, bool kHasSum>
struct SignedActs {
  struct A {
    __m256i q, offset;
    __m256 d;   // d in every lane
    __m256 ds;  // d in lane 0, s in lane 1, zero elsewhere (kHasSum only)
  };
  static A load(const ActBlock& y) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.qs));
    __m256i offset = _mm256_setzero_si256();
    if constexpr (kOffset != 0) offset = dot4(_mm256_set1_epi8(kOffset), q);
    if constexpr (kHasSum) {
      static_assert(offsetof(ActBlock, s) == offsetof(ActBlock, d) + 2);
      const __m256 ds = half_pair(&y.d, 0xFFFFFFFFu);
      return {q, offset, broadcast_lane0(ds), ds};
    } else {
      return {q, offset, _mm256_set1_ps(f16(y.d)), _mm256_setzero_ps()};
    }
  }
};

template <class WBlock, class ABlock, int kOffset, bool kHasMin, bool kFifthBit>
struct OffsetPolicy {
  using WeightBlock = WBlock;
  using ActBlock = ABlock;
  static constexpr bool kMin = kHasMin;
  using Wt = UnsignedCodes<WBlock, kOffset, kHasMin, kFifthBit>;
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

using Q4_0Policy = OffsetPolicy<BlockQ4_0, BlockQ8_0, 8, false, false>;
using Q4_1Policy = OffsetPolicy<BlockQ4_1, BlockQ8_1, 0, true, false>;
using Q5_0Policy = OffsetPolicy<BlockQ5_0, BlockQ8_0, 16, false, true>;
using Q5_1Policy = OffsetPolicy<BlockQ5_1, BlockQ8_1, 0, true, true>;

// Q8_0 x Q8_0: signed x signed, via |w| (unsigned) times a carrying w's sign.
struct Q8_0Policy {
  using WeightBlock = BlockQ8_0;
  using ActBlock = BlockQ8_0;
  static constexpr bool kMin = false;
  struct W {
    __m256i q, abs;
    __m256 d, m;
  };
  struct A {
    __m256i q;
    __m256 d, ds;
  };
  static W load_w(const BlockQ8_0& x) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qs));
    return {q, _mm256_sign_epi8(q, q), _mm256_set1_ps(f16(x.d)), _mm256_setzero_ps()};
  }
  static A load_a(const BlockQ8_0& y) {
    return {_mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.qs)), _mm256_set1_ps(f16(y.d)), _mm256_setzero_ps()};
  }
  // |w| * (a * sign(w)) = w * a; |w| = 128 for w = -128 still fits the unsigned operand
  static __m256i idot(const W& w, const A& a) { return dot4(w.abs, _mm256_sign_epi8(a.q, w.q)); }
};

// R weight rows x T tokens over nb blocks. Per output and block: acc = fma(float(isum), dw*da, acc),
// then for the types with mins acc = fma((0, m, 0..), (da, s, 0..), acc), which adds m*s to lane 1.
// Output = hsum(acc). The same operations on the same values for every R and T.
template <class P, int R, int T>
void gemm_tile(const uint8_t* w, size_t w_stride, const uint8_t* a, size_t a_stride, int64_t nb, float* out,
               int64_t out_stride) {
  using WB = typename P::WeightBlock;
  using AB = typename P::ActBlock;
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    typename P::W wr[R];
    for (int r = 0; r < R; ++r) wr[r] = P::load_w(reinterpret_cast<const WB*>(w + r * w_stride)[b]);
    for (int t = 0; t < T; ++t) {
      const typename P::A at = P::load_a(reinterpret_cast<const AB*>(a + t * a_stride)[b]);
      for (int r = 0; r < R; ++r) {
        const __m256 sums = _mm256_cvtepi32_ps(P::idot(wr[r], at));
        acc[r][t] = _mm256_fmadd_ps(sums, _mm256_mul_ps(wr[r].d, at.d), acc[r][t]);
        if constexpr (P::kMin) acc[r][t] = _mm256_fmadd_ps(wr[r].m, at.ds, acc[r][t]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) out[t * out_stride + r] = hsum(acc[r][t]);
}

// Rows per tile and tokens per tile: 8 accumulators leave room for codes and scales in 16 registers.
constexpr int kTileRows = 3;
constexpr int kTileTokens = 3;

// One strip of n_tok (< = kTileTokens) tokens over R rows.
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
    const __m256i p_lo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, q8_lo), _mm256_set1_epi16(static_cast<short>(scales[2 * c])));
    const __m256i p_hi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, q8_hi), _mm256_set1_epi16(static_cast<short>(scales[2 * c + 1])));
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

constexpr DotKernel kF32{DType::F32, dot_f32, nullptr, "avx2"};
constexpr DotKernel kF16{DType::F32, dot_f16, nullptr, "avx2"};
constexpr DotKernel kBF16{DType::F32, dot_bf16, nullptr, "avx2"};
constexpr DotKernel kQ8_0{DType::Q8_0, dot_blocks<Q8_0Policy>, gemm_blocks<Q8_0Policy>, "avx2"};
constexpr DotKernel kQ4_0{DType::Q8_0, dot_blocks<Q4_0Policy>, gemm_blocks<Q4_0Policy>, "avx2"};
constexpr DotKernel kQ4_1{DType::Q8_1, dot_blocks<Q4_1Policy>, gemm_blocks<Q4_1Policy>, "avx2"};
constexpr DotKernel kQ5_0{DType::Q8_0, dot_blocks<Q5_0Policy>, gemm_blocks<Q5_0Policy>, "avx2"};
constexpr DotKernel kQ5_1{DType::Q8_1, dot_blocks<Q5_1Policy>, gemm_blocks<Q5_1Policy>, "avx2"};
constexpr DotKernel kQ4_K{DType::Q8_K, dot_q45_k<BlockQ4_K, false>, nullptr, "avx2"};
constexpr DotKernel kQ5_K{DType::Q8_K, dot_q45_k<BlockQ5_K, true>, nullptr, "avx2"};
constexpr DotKernel kQ6_K{DType::Q8_K, dot_q6_k, nullptr, "avx2"};

}  // namespace

const DotKernel* avx2_kernel(DType weight_type) {
  switch (weight_type) {
    case DType::F32: return &kF32;
    case DType::F16: return &kF16;
    case DType::BF16: return &kBF16;
    case DType::Q8_0: return &kQ8_0;
    case DType::Q4_0: return &kQ4_0;
    case DType::Q4_1: return &kQ4_1;
    case DType::Q5_0: return &kQ5_0;
    case DType::Q5_1: return &kQ5_1;
    case DType::Q4_K: return &kQ4_K;
    case DType::Q5_K: return &kQ5_K;
    case DType::Q6_K: return &kQ6_K;
    default: return nullptr;
  }
}

}  // namespace inferscope::cpu
