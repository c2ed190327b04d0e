// The kernels of Q4_0, Q4_1, Q8_0, Q4_K and Q6_K weights with int8 activations (Q8_0/Q8_1/Q8_K), over
// rows packed eight at a time (packed_rows.h) so that lane i of every vector belongs to row i: no
// horizontal sums. Per output (row, token) and block b the operations are fixed:
//   isum = the exact integer dot of the block's codes (Q4_0: minus 8 * the sum of the activation
//          codes; Q4_K: each 32-element sub-block's dot times its 6-bit scale; Q6_K: each
//          16-element sub-block's dot with the codes - 32, times its 8-bit scale)
//   acc  = fma(float(isum), d_w * d_a, acc)
//   mins = fma(m_w, s_a, mins) (Q4_1), or fma(float(sum of min_j * activation sum_j), dmin_w * d_a,
//          mins) (Q4_K)
// and the output is acc + mins (Q4_1) or acc - mins (Q4_K). A lane never sees another lane, so the
// result does not depend on the token count, the tile or the packing: rows that come unpacked are
// packed on the fly, and the single dot is one row padded to eight with zero rows.
//
// Internal to gemm_rows8_q8act_avx2.cpp and gemm_rows8_q8act_avx512vnni.cpp, which compile it for AVX2 and for
// AVX-512VL with VNNI (the same integers: where VNNI is there, the K-quants sum four code products
// into int32 with vpdpbusd instead of pairs into int16, and multiply by the scale in int32, and every
// tile runs two groups side by side on 512-bit vectors, run_group_pair; so the same bits):
// everything here has internal linkage, so neither build's code can stand in for the
// other's at link time.
#pragma once
#include <cstring>
#include <type_traits>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/matmul/packed_rows.h"
#include "kernels/cpu/matmul/gemm_rows8_driver.h"

namespace inferscope::cpu {
namespace {

// Four activation codes (elements 4c..4c+3 from qs) in every 32-bit lane.
__m256i piece(const int8_t* qs, int c) {
  int32_t v;
  std::memcpy(&v, qs + 4 * c, sizeof v);
  return _mm256_set1_epi32(v);
}

// (lo, hi) as an int16 pair in one 32-bit word.
int int16_pair_bits(int lo, int hi) {
  return static_cast<int>((static_cast<uint32_t>(static_cast<uint16_t>(hi)) << 16) | static_cast<uint16_t>(lo));
}

// (lo, hi) as an int16 pair in every 32-bit lane.
__m256i int16_pair(int lo, int hi) { return _mm256_set1_epi32(int16_pair_bits(lo, hi)); }

#if defined(__AVX512VNNI__)
// Each row's products of 4-bit codes x the four activation codes its lane meets, summed in its int32
// lane, for the low and the high nibbles of one 32-byte load: s_lo += lo x a_lo, s_hi16 += 16 hi x a_hi
// (the high nibbles stay in place, no shift; every term is a multiple of 16, so dividing after is exact).
void nibble_dots(const uint8_t* bytes32, __m256i a_lo, __m256i a_hi, __m256i& s_lo, __m256i& s_hi16) {
  const __m256i low4 = _mm256_set1_epi8(0x0F), high4 = _mm256_set1_epi8(static_cast<char>(0xF0));
  const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes32));
  s_lo = _mm256_dpbusd_epi32(s_lo, _mm256_and_si256(bytes, low4), a_lo);
  s_hi16 = _mm256_dpbusd_epi32(s_hi16, _mm256_and_si256(bytes, high4), a_hi);
}
#else
// int16 pair sums of 4-bit codes x the four activation codes each lane's bytes meet, for the low and
// the high nibbles of one 32-byte load: s_lo += lo x a_lo, s_hi += hi x a_hi.
void nibble_dots(const uint8_t* bytes32, __m256i a_lo, __m256i a_hi, __m256i& s_lo, __m256i& s_hi) {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes32));
  s_lo = _mm256_add_epi16(s_lo, _mm256_maddubs_epi16(_mm256_and_si256(bytes, low4), a_lo));
  s_hi = _mm256_add_epi16(s_hi, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4), a_hi));
}
#endif

#if defined(__AVX512VNNI__)
// The run_group_pair helpers: group g0's bytes in the low half, g1's in the high half.
__m512i side_by_side32(const void* p0, const void* p1) {
  return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(static_cast<const __m256i*>(p0))),
                            _mm256_loadu_si256(static_cast<const __m256i*>(p1)), 1);
}
__m128i side_by_side8(const void* p0, const void* p1) {
  return _mm_unpacklo_epi64(_mm_loadl_epi64(static_cast<const __m128i*>(p0)), _mm_loadl_epi64(static_cast<const __m128i*>(p1)));
}
__m256i side_by_side16(const void* p0, const void* p1) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(static_cast<const __m128i*>(p0))),
                                 _mm_loadu_si128(static_cast<const __m128i*>(p1)), 1);
}
// Each group's eight halves (one per row) as floats.
__m512 halves16(const f16_bits* h0, const f16_bits* h1) { return _mm512_cvtph_ps(side_by_side16(h0, h1)); }
// Four activation codes (elements 4c..4c+3 from qs) in every 32-bit lane.
__m512i piece16(const int8_t* qs, int c) {
  int32_t v;
  std::memcpy(&v, qs + 4 * c, sizeof v);
  return _mm512_set1_epi32(v);
}
#endif

// ---- The 32-element block types. T tokens x one group over nb blocks; out[t * out_stride + i].

template <class Block, class Act, bool kOffset, bool kMins>
struct Block32Tile {
  static constexpr int kBlock = 32;
  static constexpr bool kPrepared = kOffset;  // Q4_0 needs 8 * each activation block's code sum

  static int32_t prepare(const uint8_t* act_row, int64_t b) {
    const auto& y = reinterpret_cast<const BlockQ8_0*>(act_row)[b];
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y.qs));
    const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q), _mm256_set1_epi16(1));
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
    h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
    return 8 * _mm_cvtsi128_si32(h);
  }

  template <int T>
  static void run(const uint8_t* group, const uint8_t* a, size_t a_stride, int64_t nb, const int32_t* prepared,
                  float* out, int64_t out_stride) {
    const auto* w = reinterpret_cast<const Block*>(group);
    const Act* act[T];
    for (int t = 0; t < T; ++t) act[t] = reinterpret_cast<const Act*>(a + t * a_stride);
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[T], mins[T];
    for (int t = 0; t < T; ++t) acc[t] = mins[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const Block& wb = w[b];
      prefetch_ahead(wb);
      __m256i isum[T];
      if constexpr (sizeof(wb.qs) == kPackedRows * 16) {
#if defined(__AVX512VNNI__)
        // 4-bit codes, each row's products summed in its int32 lane, the high ones' (at most
        // 16 * 240 * 128) divided by 16 after
        __m256i s_hi16[T];
        for (int t = 0; t < T; ++t) isum[t] = s_hi16[t] = _mm256_setzero_si256();
        for (int c = 0; c < 4; ++c)
          for (int t = 0; t < T; ++t)
            nibble_dots(wb.qs + 32 * c, piece(act[t][b].qs, c), piece(act[t][b].qs, 4 + c), isum[t], s_hi16[t]);
        for (int t = 0; t < T; ++t) isum[t] = _mm256_add_epi32(isum[t], _mm256_srai_epi32(s_hi16[t], 4));
#else
        // 4-bit codes: int16 lanes hold pair sums of 16 products of 15 * 127 at most, no overflow
        __m256i s16[T];
        for (int t = 0; t < T; ++t) s16[t] = _mm256_setzero_si256();
        for (int c = 0; c < 4; ++c)
          for (int t = 0; t < T; ++t) {
            __m256i s_hi = _mm256_setzero_si256();
            nibble_dots(wb.qs + 32 * c, piece(act[t][b].qs, c), piece(act[t][b].qs, 4 + c), s16[t], s_hi);
            s16[t] = _mm256_add_epi16(s16[t], s_hi);
          }
        for (int t = 0; t < T; ++t) isum[t] = _mm256_madd_epi16(s16[t], ones);
#endif
      } else {
        // signed x signed as |w| x (a with w's sign); a pair sum of 2 * 128 * 127 still fits int16
        for (int t = 0; t < T; ++t) isum[t] = _mm256_setzero_si256();
        for (int c = 0; c < 8; ++c) {
          const __m256i codes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb.qs + 32 * c));
          const __m256i abs = _mm256_abs_epi8(codes);
          for (int t = 0; t < T; ++t) {
            const __m256i p = _mm256_maddubs_epi16(abs, _mm256_sign_epi8(piece(act[t][b].qs, c), codes));
            isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p, ones));
          }
        }
      }
      const __m256 dw = halves8(wb.d);
      for (int t = 0; t < T; ++t) {
        if constexpr (kOffset) isum[t] = _mm256_sub_epi32(isum[t], _mm256_set1_epi32(prepared[t * nb + b]));
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_mul_ps(dw, _mm256_set1_ps(f16(act[t][b].d))), acc[t]);
        if constexpr (kMins) mins[t] = _mm256_fmadd_ps(halves8(wb.m), _mm256_set1_ps(f16(act[t][b].s)), mins[t]);
      }
    }
    for (int t = 0; t < T; ++t)
      _mm256_storeu_ps(out + t * out_stride, kMins ? _mm256_add_ps(acc[t], mins[t]) : acc[t]);
  }

#if defined(__AVX512VNNI__)
  // run<T> over two neighbouring groups at once on 512-bit vectors: lanes 0-7 are group g0's rows and
  // lanes 8-15 group g1's, whose outputs follow g0's. Each lane's integers and float operations are
  // run<T>'s (the Q8_0 pair sums summed four at a time by vpdpbusd: the same exact int32), so are its bits.
  template <int T>
  static void run_group_pair(const uint8_t* g0, const uint8_t* g1, const uint8_t* a, size_t a_stride, int64_t nb,
                             const int32_t* prepared, float* out, int64_t out_stride) {
    const auto* w0 = reinterpret_cast<const Block*>(g0);
    const auto* w1 = reinterpret_cast<const Block*>(g1);
    const Act* act[T];
    for (int t = 0; t < T; ++t) act[t] = reinterpret_cast<const Act*>(a + t * a_stride);
    __m512 acc[T], mins[T];
    for (int t = 0; t < T; ++t) acc[t] = mins[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const Block& wb0 = w0[b];
      const Block& wb1 = w1[b];
      prefetch_ahead(wb0);
      prefetch_ahead(wb1);
      __m512i isum[T];
      for (int t = 0; t < T; ++t) isum[t] = _mm512_setzero_si512();
      if constexpr (sizeof(wb0.qs) == kPackedRows * 16) {
        // 4-bit codes: the low nibbles' products, and 16 x the high nibbles' (divided by 16 after)
        const __m512i low4 = _mm512_set1_epi8(0x0F), high4 = _mm512_set1_epi8(static_cast<char>(0xF0));
        __m512i s_hi16[T];
        for (int t = 0; t < T; ++t) s_hi16[t] = _mm512_setzero_si512();
        for (int c = 0; c < 4; ++c) {
          const __m512i bytes = side_by_side32(wb0.qs + 32 * c, wb1.qs + 32 * c);
          const __m512i lo = _mm512_and_si512(bytes, low4), hi = _mm512_and_si512(bytes, high4);
          for (int t = 0; t < T; ++t) {
            isum[t] = _mm512_dpbusd_epi32(isum[t], lo, piece16(act[t][b].qs, c));
            s_hi16[t] = _mm512_dpbusd_epi32(s_hi16[t], hi, piece16(act[t][b].qs, 4 + c));
          }
        }
        for (int t = 0; t < T; ++t) isum[t] = _mm512_add_epi32(isum[t], _mm512_srai_epi32(s_hi16[t], 4));
      } else {
        // signed x signed as |w| x (a with w's sign)
        for (int c = 0; c < 8; ++c) {
          const __m512i codes = side_by_side32(wb0.qs + 32 * c, wb1.qs + 32 * c);
          const __m512i abs = _mm512_abs_epi8(codes);
          const __mmask64 negative = _mm512_movepi8_mask(codes);
          for (int t = 0; t < T; ++t) {
            const __m512i a_c = piece16(act[t][b].qs, c);
            isum[t] = _mm512_dpbusd_epi32(isum[t], abs, _mm512_mask_sub_epi8(a_c, negative, _mm512_setzero_si512(), a_c));
          }
        }
      }
      const __m512 dw = halves16(wb0.d, wb1.d);
      for (int t = 0; t < T; ++t) {
        if constexpr (kOffset) isum[t] = _mm512_sub_epi32(isum[t], _mm512_set1_epi32(prepared[t * nb + b]));
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(dw, _mm512_set1_ps(f16(act[t][b].d))), acc[t]);
        if constexpr (kMins) mins[t] = _mm512_fmadd_ps(halves16(wb0.m, wb1.m), _mm512_set1_ps(f16(act[t][b].s)), mins[t]);
      }
    }
    for (int t = 0; t < T; ++t)
      _mm512_storeu_ps(out + t * out_stride, kMins ? _mm512_add_ps(acc[t], mins[t]) : acc[t]);
  }
#endif
};

using Q4_0Tile = Block32Tile<PackedQ4_0x8, BlockQ8_0, true, false>;
using Q4_1Tile = Block32Tile<PackedQ4_1x8, BlockQ8_1, false, true>;
using Q8_0Tile = Block32Tile<PackedQ8_0x8, BlockQ8_0, false, false>;

// ---- Q4_K x Q8_K: super-blocks of 256, eight sub-blocks of 32 with 6-bit scales and mins.

struct Q4_KTile {
  static constexpr int kBlock = QK_K;
  static constexpr bool kPrepared = false;
  static int32_t prepare(const uint8_t*, int64_t) { return 0; }

  // Eight bytes, one per row, as int16 lanes 2i and 2i + 1 = byte i (madd's row-lane pairs).
  static __m256i per_row_pairs(const uint8_t* bytes8) {
    const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes8));
    return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(b, b));
  }

  template <int T>
  static void run(const uint8_t* group, const uint8_t* a, size_t a_stride, int64_t nb, const int32_t*, float* out,
                  int64_t out_stride) {
    const auto* w = reinterpret_cast<const PackedQ4_Kx8*>(group);
    const BlockQ8_K* act[T];
    for (int t = 0; t < T; ++t) act[t] = reinterpret_cast<const BlockQ8_K*>(a + t * a_stride);
    __m256 acc[T], mins[T];
    for (int t = 0; t < T; ++t) acc[t] = mins[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const PackedQ4_Kx8& wb = w[b];
      prefetch_ahead(wb);
      __m256i isum[T], msum[T];
      for (int t = 0; t < T; ++t) isum[t] = msum[t] = _mm256_setzero_si256();
      for (int k = 0; k < QK_K / 64; ++k) {  // sub-blocks 2k (low nibbles) and 2k + 1 (high nibbles)
        __m256i s_lo[T], s_hi[T];
        for (int t = 0; t < T; ++t) s_lo[t] = s_hi[t] = _mm256_setzero_si256();
        // 8 pieces of 4 codes (with VNNI: each row's 32 products in its int32 lane, the high nibbles'
        // at most 32 * 240 * 128 and 16 x their dot; else 8 int16 pair sums of 15 * 127 at most)
        for (int c = 0; c < 8; ++c)
          for (int t = 0; t < T; ++t) {
            const int8_t* q = act[t][b].qs + 64 * k;
            nibble_dots(wb.qs + 32 * (8 * k + c), piece(q, c), piece(q + 32, c), s_lo[t], s_hi[t]);
          }
#if defined(__AVX512VNNI__)
        for (int t = 0; t < T; ++t) s_hi[t] = _mm256_srai_epi32(s_hi[t], 4);
        const __m256i sc_lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(wb.scales[2 * k])));
        const __m256i sc_hi = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(wb.scales[2 * k + 1])));
#else
        const __m256i sc_lo = per_row_pairs(wb.scales[2 * k]), sc_hi = per_row_pairs(wb.scales[2 * k + 1]);
#endif
        // row i's mins of sub-blocks 2k, 2k + 1 in int16 lanes 2i, 2i + 1
        const __m256i mn = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(wb.mins[k])));
        for (int t = 0; t < T; ++t) {
#if defined(__AVX512VNNI__)
          isum[t] = _mm256_add_epi32(isum[t], _mm256_add_epi32(_mm256_mullo_epi32(s_lo[t], sc_lo),
                                                                _mm256_mullo_epi32(s_hi[t], sc_hi)));
#else
          isum[t] = _mm256_add_epi32(isum[t], _mm256_add_epi32(_mm256_madd_epi16(s_lo[t], sc_lo),
                                                                _mm256_madd_epi16(s_hi[t], sc_hi)));
#endif
          // the activation sums of sub-blocks 2k and 2k + 1 as an int16 pair in every lane
          const int16_t* bs = act[t][b].bsums + 4 * k;
          msum[t] = _mm256_add_epi32(msum[t], _mm256_madd_epi16(mn, int16_pair(bs[0] + bs[1], bs[2] + bs[3])));
        }
      }
      const __m256 dw = halves8(wb.d), dmin = halves8(wb.dmin);
      for (int t = 0; t < T; ++t) {
        const __m256 da = _mm256_set1_ps(act[t][b].d);
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_mul_ps(dw, da), acc[t]);
        mins[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum[t]), _mm256_mul_ps(dmin, da), mins[t]);
      }
    }
    for (int t = 0; t < T; ++t) _mm256_storeu_ps(out + t * out_stride, _mm256_sub_ps(acc[t], mins[t]));
  }

#if defined(__AVX512VNNI__)
  // run<T> over two neighbouring groups at once on 512-bit vectors (lanes 0-7 group g0's rows, 8-15
  // g1's), each lane's integers and float operations run<T>'s, so its bits.
  template <int T>
  static void run_group_pair(const uint8_t* g0, const uint8_t* g1, const uint8_t* a, size_t a_stride, int64_t nb,
                             const int32_t*, float* out, int64_t out_stride) {
    const auto* w0 = reinterpret_cast<const PackedQ4_Kx8*>(g0);
    const auto* w1 = reinterpret_cast<const PackedQ4_Kx8*>(g1);
    const BlockQ8_K* act[T];
    for (int t = 0; t < T; ++t) act[t] = reinterpret_cast<const BlockQ8_K*>(a + t * a_stride);
    const __m512i low4 = _mm512_set1_epi8(0x0F), high4 = _mm512_set1_epi8(static_cast<char>(0xF0));
    __m512 acc[T], mins[T];
    for (int t = 0; t < T; ++t) acc[t] = mins[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const PackedQ4_Kx8& wb0 = w0[b];
      const PackedQ4_Kx8& wb1 = w1[b];
      prefetch_ahead(wb0);
      prefetch_ahead(wb1);
      __m512i isum[T], msum[T];
      for (int t = 0; t < T; ++t) isum[t] = msum[t] = _mm512_setzero_si512();
      for (int k = 0; k < QK_K / 64; ++k) {  // sub-blocks 2k (low nibbles) and 2k + 1 (high nibbles)
        __m512i s_lo[T], s_hi[T];
        for (int t = 0; t < T; ++t) s_lo[t] = s_hi[t] = _mm512_setzero_si512();
        for (int c = 0; c < 8; ++c) {
          const int64_t off = 32 * (8 * k + c);
          const __m512i bytes = side_by_side32(wb0.qs + off, wb1.qs + off);
          const __m512i lo = _mm512_and_si512(bytes, low4), hi = _mm512_and_si512(bytes, high4);
          for (int t = 0; t < T; ++t) {
            const int8_t* q = act[t][b].qs + 64 * k;
            s_lo[t] = _mm512_dpbusd_epi32(s_lo[t], lo, piece16(q, c));
            s_hi[t] = _mm512_dpbusd_epi32(s_hi[t], hi, piece16(q + 32, c));
          }
        }
        const __m512i sc_lo = _mm512_cvtepu8_epi32(side_by_side8(wb0.scales[2 * k], wb1.scales[2 * k]));
        const __m512i sc_hi = _mm512_cvtepu8_epi32(side_by_side8(wb0.scales[2 * k + 1], wb1.scales[2 * k + 1]));
        // row i's mins of sub-blocks 2k, 2k + 1 in int16 lanes 2i, 2i + 1
        const __m512i mn = _mm512_cvtepu8_epi16(side_by_side16(wb0.mins[k], wb1.mins[k]));
        for (int t = 0; t < T; ++t) {
          isum[t] = _mm512_add_epi32(isum[t], _mm512_add_epi32(_mm512_mullo_epi32(s_lo[t], sc_lo),
                                                                _mm512_mullo_epi32(_mm512_srai_epi32(s_hi[t], 4), sc_hi)));
          const int16_t* bs = act[t][b].bsums + 4 * k;
          msum[t] = _mm512_add_epi32(msum[t], _mm512_madd_epi16(mn, _mm512_set1_epi32(int16_pair_bits(bs[0] + bs[1], bs[2] + bs[3]))));
        }
      }
      const __m512 dw = halves16(wb0.d, wb1.d), dmin = halves16(wb0.dmin, wb1.dmin);
      for (int t = 0; t < T; ++t) {
        const __m512 da = _mm512_set1_ps(act[t][b].d);
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(dw, da), acc[t]);
        mins[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(msum[t]), _mm512_mul_ps(dmin, da), mins[t]);
      }
    }
    for (int t = 0; t < T; ++t) _mm512_storeu_ps(out + t * out_stride, _mm512_sub_ps(acc[t], mins[t]));
  }
#endif
};

// ---- Q6_K x Q8_K: super-blocks of 256, sixteen sub-blocks of 16 with int8 scales, codes of 6 bits
// (a nibble of ql and two bits of qh) stored + 32.

struct Q6_KTile {
  static constexpr int kBlock = QK_K;
  static constexpr bool kPrepared = false;
  static int32_t prepare(const uint8_t*, int64_t) { return 0; }

  // Sub-block j's and j2's scales (eight bytes each, one per row) as int16 lanes 2i (j) and 2i + 1 (j2).
  static __m256i scale_pairs(const int8_t* j8, const int8_t* j2_8) { return _mm256_cvtepi8_epi16(scale_bytes(j8, j2_8)); }
  // The same sixteen scales as bytes: row i's j in byte 2i, its j2 in byte 2i + 1.
  static __m128i scale_bytes(const int8_t* j8, const int8_t* j2_8) {
    return _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(j8)),
                             _mm_loadl_epi64(reinterpret_cast<const __m128i*>(j2_8)));
  }

  template <int T>
  static void run(const uint8_t* group, const uint8_t* a, size_t a_stride, int64_t nb, const int32_t*, float* out,
                  int64_t out_stride) {
    const auto* w = reinterpret_cast<const PackedQ6_Kx8*>(group);
    const BlockQ8_K* act[T];
    for (int t = 0; t < T; ++t) act[t] = reinterpret_cast<const BlockQ8_K*>(a + t * a_stride);
    const __m256i low4 = _mm256_set1_epi8(0x0F), bits45 = _mm256_set1_epi8(0x30);
    __m256 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const PackedQ6_Kx8& wb = w[b];
      prefetch_ahead(wb);
      __m256i isum[T];
      for (int t = 0; t < T; ++t) isum[t] = _mm256_setzero_si256();
      // elements 128h + 32k + 4c..4c+3: the low (k < 2) or high nibble of ql piece 16h + 8(k % 2) + c,
      // topped by bits 2k, 2k + 1 of qh piece 8h + c; the three pieces lie together
      const auto codes_of = [&](int h, int c, __m256i (&codes)[4]) {
        const auto load = [](const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); };
        const uint8_t* trio = wb.codes + 3 * 32 * (8 * h + c);
        const __m256i ql0 = load(trio), ql1 = load(trio + 32), qh = load(trio + 64);
        const __m256i low[4] = {ql0, ql1, _mm256_srli_epi16(ql0, 4), _mm256_srli_epi16(ql1, 4)};
        for (int k = 0; k < 4; ++k) {
          // bits 2k, 2k + 1 of each qh byte moved to bits 4, 5 (what crosses into a neighbour byte is masked off)
          const __m256i moved = k < 2 ? _mm256_slli_epi16(qh, 4 - 2 * k) : k == 2 ? qh : _mm256_srli_epi16(qh, 2);
          codes[k] = _mm256_or_si256(_mm256_and_si256(low[k], low4), _mm256_and_si256(moved, bits45));
        }
      };
#if defined(__AVX512VNNI__)
      for (int h = 0; h < 2; ++h)
        for (int c0 = 0; c0 < 8; c0 += 4) {  // pieces c0..c0 + 3 share each sub-block's scale
          __m256i s_k[4][T];  // row i's products in sub-block 8h + 2k + c0 / 4, summed in int32 lane i
          for (int k = 0; k < 4; ++k)
            for (int t = 0; t < T; ++t) s_k[k][t] = _mm256_setzero_si256();
          for (int c = c0; c < c0 + 4; ++c) {
            __m256i codes[4];
            codes_of(h, c, codes);
            for (int k = 0; k < 4; ++k)
              for (int t = 0; t < T; ++t)
                s_k[k][t] = _mm256_dpbusd_epi32(s_k[k][t], codes[k], piece(act[t][b].qs + 128 * h + 32 * k, c));
          }
          for (int k = 0; k < 4; ++k) {
            const int8_t* sc8 = wb.scales[8 * h + 2 * k + c0 / 4];
            const __m256i sc = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc8)));
            for (int t = 0; t < T; ++t) isum[t] = _mm256_add_epi32(isum[t], _mm256_mullo_epi32(s_k[k][t], sc));
          }
        }
#else
      __m256i scale[QK_K / 16];  // row i's scale of sub-block j in int16 lanes 2i and 2i + 1
      for (int j = 0; j < QK_K / 16; ++j) scale[j] = scale_pairs(wb.scales[j], wb.scales[j]);
      for (int h = 0; h < 2; ++h)
        for (int c = 0; c < 8; c += 2) {  // pieces c and c + 1 share their sub-block's scale
          __m256i codes0[4], codes1[4];
          codes_of(h, c, codes0);
          codes_of(h, c + 1, codes1);
          for (int k = 0; k < 4; ++k) {
            const __m256i& sc = scale[8 * h + 2 * k + c / 4];
            // a pair of 63 * 128 products fits int16, and so do two pairs (32256); times the scale in int32
            for (int t = 0; t < T; ++t) {
              const int8_t* q = act[t][b].qs + 128 * h + 32 * k;
              const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(codes0[k], piece(q, c)),
                                                 _mm256_maddubs_epi16(codes1[k], piece(q, c + 1)));
              isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p, sc));
            }
          }
        }
#endif
      const __m256 dw = halves8(wb.d);
      __m256i scales_2j[QK_K / 32];  // row i's scales of sub-blocks 2j, 2j + 1 in int16 lanes 2i, 2i + 1
      for (int j = 0; j < QK_K / 32; ++j) scales_2j[j] = scale_pairs(wb.scales[2 * j], wb.scales[2 * j + 1]);
      for (int t = 0; t < T; ++t) {
        // the codes' + 32: subtract 32 * sum over sub-blocks of scale_j * (sum of its activation codes)
        __m256i offset = _mm256_setzero_si256();
        const int16_t* bs = act[t][b].bsums;
        for (int j = 0; j < QK_K / 32; ++j)
          offset = _mm256_add_epi32(offset, _mm256_madd_epi16(scales_2j[j], int16_pair(bs[2 * j], bs[2 * j + 1])));
        isum[t] = _mm256_sub_epi32(isum[t], _mm256_slli_epi32(offset, 5));
        acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_mul_ps(dw, _mm256_set1_ps(act[t][b].d)), acc[t]);
      }
    }
    for (int t = 0; t < T; ++t) _mm256_storeu_ps(out + t * out_stride, acc[t]);
  }

#if defined(__AVX512VNNI__)
  // Both groups' sub-block j and j2 scales as int16 lanes 2i (j) and 2i + 1 (j2), group g1's rows in 8-15.
  static __m512i scale_pairs16(const PackedQ6_Kx8& wb0, const PackedQ6_Kx8& wb1, int j, int j2) {
    return _mm512_cvtepi8_epi16(_mm256_inserti128_si256(_mm256_castsi128_si256(scale_bytes(wb0.scales[j], wb0.scales[j2])),
                                                        scale_bytes(wb1.scales[j], wb1.scales[j2]), 1));
  }

  // run<T>'s VNNI path over two neighbouring groups at once on 512-bit vectors (lanes 0-7 group g0's
  // rows, 8-15 g1's), each lane's integers and float operations run<T>'s, so its bits.
  template <int T>
  static void run_group_pair(const uint8_t* g0, const uint8_t* g1, const uint8_t* a, size_t a_stride, int64_t nb,
                             const int32_t*, float* out, int64_t out_stride) {
    const auto* w0 = reinterpret_cast<const PackedQ6_Kx8*>(g0);
    const auto* w1 = reinterpret_cast<const PackedQ6_Kx8*>(g1);
    const BlockQ8_K* act[T];
    for (int t = 0; t < T; ++t) act[t] = reinterpret_cast<const BlockQ8_K*>(a + t * a_stride);
    const __m512i low4 = _mm512_set1_epi8(0x0F), bits45 = _mm512_set1_epi8(0x30);
    __m512 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
      const PackedQ6_Kx8& wb0 = w0[b];
      const PackedQ6_Kx8& wb1 = w1[b];
      prefetch_ahead(wb0);
      prefetch_ahead(wb1);
      __m512i isum[T];
      for (int t = 0; t < T; ++t) isum[t] = _mm512_setzero_si512();
      // run<T>'s codes_of, both groups' pieces side by side
      const auto codes_of = [&](int h, int c, __m512i (&codes)[4]) {
        const int64_t trio = 3 * 32 * (8 * h + c);
        const __m512i ql0 = side_by_side32(wb0.codes + trio, wb1.codes + trio);
        const __m512i ql1 = side_by_side32(wb0.codes + trio + 32, wb1.codes + trio + 32);
        const __m512i qh = side_by_side32(wb0.codes + trio + 64, wb1.codes + trio + 64);
        const __m512i low[4] = {ql0, ql1, _mm512_srli_epi16(ql0, 4), _mm512_srli_epi16(ql1, 4)};
        for (int k = 0; k < 4; ++k) {
          const __m512i moved = k < 2 ? _mm512_slli_epi16(qh, 4 - 2 * k) : k == 2 ? qh : _mm512_srli_epi16(qh, 2);
          codes[k] = _mm512_or_si512(_mm512_and_si512(low[k], low4), _mm512_and_si512(moved, bits45));
        }
      };
      for (int h = 0; h < 2; ++h)
        for (int c0 = 0; c0 < 8; c0 += 4) {  // pieces c0..c0 + 3 share each sub-block's scale
          __m512i s_k[4][T];
          for (int k = 0; k < 4; ++k)
            for (int t = 0; t < T; ++t) s_k[k][t] = _mm512_setzero_si512();
          for (int c = c0; c < c0 + 4; ++c) {
            __m512i codes[4];
            codes_of(h, c, codes);
            for (int k = 0; k < 4; ++k)
              for (int t = 0; t < T; ++t)
                s_k[k][t] = _mm512_dpbusd_epi32(s_k[k][t], codes[k], piece16(act[t][b].qs + 128 * h + 32 * k, c));
          }
          for (int k = 0; k < 4; ++k) {
            const int j = 8 * h + 2 * k + c0 / 4;
            const __m512i sc = _mm512_cvtepi8_epi32(side_by_side8(wb0.scales[j], wb1.scales[j]));
            for (int t = 0; t < T; ++t) isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(s_k[k][t], sc));
          }
        }
      const __m512 dw = halves16(wb0.d, wb1.d);
      __m512i scales_2j[QK_K / 32];
      for (int j = 0; j < QK_K / 32; ++j) scales_2j[j] = scale_pairs16(wb0, wb1, 2 * j, 2 * j + 1);
      for (int t = 0; t < T; ++t) {
        // the codes' + 32: subtract 32 * sum over sub-blocks of scale_j * (sum of its activation codes)
        __m512i offset = _mm512_setzero_si512();
        const int16_t* bs = act[t][b].bsums;
        for (int j = 0; j < QK_K / 32; ++j)
          offset = _mm512_add_epi32(offset, _mm512_madd_epi16(scales_2j[j], _mm512_set1_epi32(int16_pair_bits(bs[2 * j], bs[2 * j + 1]))));
        isum[t] = _mm512_sub_epi32(isum[t], _mm512_slli_epi32(offset, 5));
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[t]), _mm512_mul_ps(dw, _mm512_set1_ps(act[t][b].d)), acc[t]);
      }
    }
    for (int t = 0; t < T; ++t) _mm512_storeu_ps(out + t * out_stride, acc[t]);
  }
#endif
};

// ---- The driver: token strips x packed groups (unpacked rows: gemm_rows8_driver.h).

constexpr int kTileTokens = 4;

// Packed groups x n_tok tokens: strips of up to four tokens, every group per strip (the strip's
// activations stay in L1 while the groups stream past).
template <class Tile, DType kType>
void gemm_packed(const void* w, size_t group_stride, int64_t n_groups, const void* a, size_t a_stride, int64_t n_tok,
                 int64_t n, float* out, int64_t out_stride) {
  const int64_t nb = n / Tile::kBlock;
  const auto* ab = static_cast<const uint8_t*>(a);
  int32_t* prepared = nullptr;
  if constexpr (Tile::kPrepared) prepared = static_cast<int32_t*>(__builtin_alloca(sizeof(int32_t) * kTileTokens * nb));
  for (int64_t t0 = 0; t0 < n_tok; t0 += kTileTokens) {
    const int64_t nt = n_tok - t0 < kTileTokens ? n_tok - t0 : kTileTokens;
    const uint8_t* at = ab + t0 * a_stride;
    if constexpr (Tile::kPrepared)
      for (int64_t t = 0; t < nt; ++t)
        for (int64_t b = 0; b < nb; ++b) prepared[t * nb + b] = Tile::prepare(at + t * a_stride, b);
    const auto group = [&](int64_t g) { return static_cast<const uint8_t*>(w) + g * group_stride; };
    // every group over the strip's T tokens
    const auto run_groups = [&]<int T>(std::integral_constant<int, T>) {
      float* og = out + t0 * out_stride;
      int64_t g = 0;
#if defined(__AVX512VNNI__)
      // two groups at a time on 512-bit vectors
      for (; g + 1 < n_groups; g += 2)
        Tile::template run_group_pair<T>(group(g), group(g + 1), at, a_stride, nb, prepared, og + g * kPackedRows, out_stride);
#endif
      for (; g < n_groups; ++g) Tile::template run<T>(group(g), at, a_stride, nb, prepared, og + g * kPackedRows, out_stride);
    };
    switch (nt) {
      case 1: run_groups(std::integral_constant<int, 1>{}); break;
      case 2: run_groups(std::integral_constant<int, 2>{}); break;
      case 3: run_groups(std::integral_constant<int, 3>{}); break;
      default: run_groups(std::integral_constant<int, kTileTokens>{}); break;
    }
  }
}

template <class Tile, DType kType, DType kAct, QuantizeFn kQuantize, const char* kName>
constexpr DotKernel kernel{kAct,
                           kQuantize,
                           dot_packing_on_the_fly<gemm_packed<Tile, kType>, kType>,
                           gemm_packing_on_the_fly<gemm_packed<Tile, kType>, kType>,
                           kName,
                           gemm_packed<Tile, kType>};

// The kernel of this weight type, named kName (the instruction set it was compiled for), or nullptr.
template <const char* kName>
const DotKernel* rows8_q8act_kernel(DType weight_type) {
  switch (weight_type) {
    case DType::Q4_0: return &kernel<Q4_0Tile, DType::Q4_0, DType::Q8_0, quantize_q8_0_avx2, kName>;
    case DType::Q4_1: return &kernel<Q4_1Tile, DType::Q4_1, DType::Q8_1, quantize_q8_1_avx2, kName>;
    case DType::Q8_0: return &kernel<Q8_0Tile, DType::Q8_0, DType::Q8_0, quantize_q8_0_avx2, kName>;
    case DType::Q4_K: return &kernel<Q4_KTile, DType::Q4_K, DType::Q8_K, quantize_q8_k_avx2, kName>;
    case DType::Q6_K: return &kernel<Q6_KTile, DType::Q6_K, DType::Q8_K, quantize_q8_k_avx2, kName>;
    default: return nullptr;
  }
}

}  // namespace
}  // namespace inferscope::cpu
