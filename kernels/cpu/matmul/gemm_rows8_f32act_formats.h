// How the exact packed-row kernels (gemm_rows8_f32act_avx2.cpp) read each format: its codes where
// they lie in the packed bytes (packed_rows.h), as code x 2^k, exactly, in spans of kSteps steps of
// eight codes per row, and each span's scales (one for codes e < 4, one for e >= 4) and mins.
// Prepared formats get their activations reordered to the span's order, scaled by 2^-k per lane,
// with the sums (xsum) of the runs their mins cover.
// - Q4_0, Q4_1: a span is a block (four steps); step c is code piece c (the code bytes 4c..4c+3);
//   e < 4: the low nibble of byte e, element 4c + e; else the high nibble of byte e - 4, element
//   4c + 12 + e. A nibble is masked in place (the top one shifted down); scale d, min m against the
//   block's sum (Q4_0: -8 d, exact).
// - Q4_K: a span is sub-blocks 2k and 2k + 1 of a block (eight steps, pieces 8k..8k+7); the low
//   nibbles are sub-block 2k's elements 4c + e, the high ones sub-block 2k + 1's, so codes e < 4 take
//   the scale d x scale_2k and codes e >= 4 d x scale_2k+1 (both exact), the mins -dmin x min_j
//   against each sub-block's sum.
// - Q5_0, Q5_1, Q5_K: spans and steps as Q4_0, Q4_1 and Q4_K; each nibble joined with its fifth bit
//   in its byte (the low runs' codes in one word, the high runs' in another), then masked in place as
//   for Q6_K; Q5_0's offset is -16 d.
// - Q6_K: a span is 16 elements of each of two 32-element sub-blocks (four steps); code e < 4 of step
//   c is byte e of the lower sub-block's word of four joined 6-bit codes (nibble and two high bits),
//   e >= 4 byte e - 4 of the upper's, masked in place; scales d x scale_g of the two 16-element
//   groups, and their code offset -32 d x scale_g against each group's sum.
// - Q8_0: a span is a block; step c is pieces 2c and 2c + 1, code e element 8c + e; a signed byte is
//   moved to the top of its 32-bit lane (code x 2^24), the activations are used as they are and d
//   comes as d 2^-24, so p_e is 2^24 times the products' sum, rounded the same way. No mins.
#pragma once
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/matmul/packed_rows.h"

namespace inferscope::cpu::rows8_f32act {
// internal linkage: each build of the kernels (AVX2, AVX-512VL) keeps its own copy
namespace {

inline constexpr int kStepCodes = 8;  // codes per step

// Q4 code e of a piece: its bit in the 32-bit piece; the top nibble is shifted down to bit 0 first
// (in place it would be negative as an int32), so it is taken as itself and the rest as code x 2^bit.
constexpr int code_bit(int e) { return e < 4 ? 8 * e : 8 * (e - 4) + 4; }
inline constexpr int kTopCode = 7;
constexpr int code_shift(int e) { return e == kTopCode ? code_bit(e) : 0; }
constexpr int code_power(int e) { return code_bit(e) - code_shift(e); }

// Per lane e: the shift and mask that take Q4 code e out of a piece, and 2^-code_power(e), the scale
// of its activation.
struct CodeLanes {
  alignas(32) int32_t shift[kStepCodes];
  alignas(32) int32_t mask[kStepCodes];
  alignas(32) float scale[kStepCodes];
};
constexpr CodeLanes code_lanes() {
  CodeLanes lanes{};
  for (int e = 0; e < kStepCodes; ++e) {
    lanes.shift[e] = code_shift(e);
    lanes.mask[e] = 0xF << code_power(e);
    lanes.scale[e] = 1.0f / static_cast<float>(1 << code_power(e));  // exact: a power of two
  }
  return lanes;
}
inline constexpr CodeLanes kCodeLanes = code_lanes();

// The eight rows' 4-byte words of one slot at b (32 bytes), row i's in lane i.
__attribute__((always_inline)) inline __m256i row_words(const void* b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
}

// One row's 4-byte word at b in every lane.
__attribute__((always_inline)) inline __m256i broadcast_word(const uint8_t* b) {
  int32_t v;
  std::memcpy(&v, b, sizeof v);
  return _mm256_set1_epi32(v);
}

// Code e of the eight rows' words w, row i in lane i, by the lanes' table: in place (masked), or,
// where the table shifts it, shifted down (a top code, which its shift leaves alone in the word).
__attribute__((always_inline)) inline __m256i row_code(const CodeLanes& lanes, int e, __m256i w) {
  return lanes.shift[e] != 0 ? _mm256_srli_epi32(w, lanes.shift[e])
                             : _mm256_and_si256(w, _mm256_set1_epi32(lanes.mask[e]));
}

// The eight codes of one row's words w (lane e holds the word of code e), code e in lane e, as floats.
__attribute__((always_inline)) inline __m256 lane_codes_of(const CodeLanes& lanes, __m256i w) {
  const __m256i shifts = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes.shift));
  const __m256i masks = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes.mask));
  return _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srlv_epi32(w, shifts), masks));
}

#if defined(__AVX512F__)
// A step's two words of the eight rows side by side for the 512-bit register path: row i's word of
// codes e < 4 in lane 2i, of codes e >= 4 in lane 2i + 1.
__attribute__((always_inline)) inline __m512i pair_words(__m256i lo, __m256i hi) {
  const __m512i order = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  return _mm512_permutex2var_epi32(_mm512_castsi256_si512(lo), order, _mm512_castsi256_si512(hi));
}

// Codes j (lanes 2i) and j + 4 (lanes 2i + 1) of pair_words' w, each as row_code takes it.
__attribute__((always_inline)) inline __m512i pair_row_code(const CodeLanes& lanes, int j, __m512i w) {
  const int lo = lanes.shift[j], hi = lanes.shift[j + 4];
  if (lo == 0 && hi == 0) {
    const __m512i mask = _mm512_set_epi32(lanes.mask[j + 4], lanes.mask[j], lanes.mask[j + 4], lanes.mask[j],
                                          lanes.mask[j + 4], lanes.mask[j], lanes.mask[j + 4], lanes.mask[j],
                                          lanes.mask[j + 4], lanes.mask[j], lanes.mask[j + 4], lanes.mask[j],
                                          lanes.mask[j + 4], lanes.mask[j], lanes.mask[j + 4], lanes.mask[j]);
    return _mm512_and_si512(w, mask);
  }
  if (lo == hi) return _mm512_srli_epi32(w, static_cast<unsigned>(lo));
  // one lane shifted, the other masked: shift both by their own count, then keep all of a shifted lane
  const int32_t keep_lo = lo != 0 ? -1 : lanes.mask[j], keep_hi = hi != 0 ? -1 : lanes.mask[j + 4];
  const __m512i shift = _mm512_set_epi32(hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo, hi, lo);
  const __m512i keep = _mm512_set_epi32(keep_hi, keep_lo, keep_hi, keep_lo, keep_hi, keep_lo, keep_hi, keep_lo,
                                        keep_hi, keep_lo, keep_hi, keep_lo, keep_hi, keep_lo, keep_hi, keep_lo);
  return _mm512_and_si512(_mm512_srlv_epi32(w, shift), keep);
}
#endif

// Nibble piece p of row i, code e in lane e.
__attribute__((always_inline)) inline __m256 nibble_lane_codes(const uint8_t* qs, int p, int i) {
  return lane_codes_of(kCodeLanes, broadcast_word(qs + 32 * p + 4 * i));
}

// How the formats whose codes are masked or shifted in place by a table of lanes take code e out of
// the word w that holds it (row_code), and, on 512-bit vectors, codes j and j + 4 (pair_row_code).
template <const CodeLanes& L>
struct LaneCodes {
  static __attribute__((always_inline)) __m256i code(int e, __m256i w) { return row_code(L, e, w); }
#if defined(__AVX512F__)
  static __attribute__((always_inline)) __m512i pair_code(int j, __m512i w) { return pair_row_code(L, j, w); }
#endif
};

// The scales of a span, rows in lanes: of its codes e < 4 and e >= 4.
struct SpanScales {
  __m256 lo, hi;
};

// Each format: Packed, kSteps (steps per span), kSpans (spans per packed block), kMins (mins per
// span: 1 covers the span, 2 its two runs), kPrepared (activations prepared, else used as they are);
// with preparation, kLaneScale (the activation scale per lane), run_start(s) (the first element of
// span s's lower run) and kHiOffset (its upper run's distance); the codes of step c of span k of a
// packed block: the eight rows' two words that hold them (step_words: lo for codes e < 4, hi for
// e >= 4), code e of such a word (code; pair_code: codes j and j + 4 side by side on 512-bit vectors),
// one row's codes in lanes (lane_codes); scales(block, k), mins(block, k, j, its scales).

// Q4_0, Q4_1 (and, with their fifth bits, Q5_0, Q5_1); kOffset: the codes' offset where there is no
// m (Q4_0: 8, Q5_0: 16).
template <class P, int kOffset = 8>
struct Nibbles : LaneCodes<kCodeLanes> {
  using Packed = P;
  static constexpr int kSteps = 4, kSpans = 1, kMins = 1;
  static constexpr bool kPrepared = true;
  static constexpr const float* kLaneScale = kCodeLanes.scale;
  static constexpr int64_t run_start(int64_t s) { return 32 * s; }
  static constexpr int kHiOffset = 16;
  // both runs' codes lie in one piece
  static __attribute__((always_inline)) void step_words(const P& wb, int, int c, __m256i& lo, __m256i& hi) {
    lo = hi = row_words(wb.qs + 32 * c);
  }
  static __attribute__((always_inline)) __m256 lane_codes(const P& wb, int, int c, int i) {
    return nibble_lane_codes(wb.qs, c, i);
  }
  static __attribute__((always_inline)) SpanScales scales(const P& wb, int) { return {halves8(wb.d), halves8(wb.d)}; }
  static __attribute__((always_inline)) __m256 mins(const P& wb, int, int, const SpanScales& sc) {
    if constexpr (requires { wb.m; }) return halves8(wb.m);
    return _mm256_mul_ps(sc.lo, _mm256_set1_ps(-static_cast<float>(kOffset)));
  }
};

// Q4_K (and, with its fifth bits, Q5_K): span k is sub-blocks 2k (the low nibbles) and 2k + 1 (the
// high ones).
template <class P>
struct KNibbles : LaneCodes<kCodeLanes> {
  using Packed = P;
  static constexpr int kSteps = 8, kSpans = QK_K / 64, kMins = 2;
  static constexpr bool kPrepared = true;
  static constexpr const float* kLaneScale = kCodeLanes.scale;
  static constexpr int64_t run_start(int64_t s) { return 64 * s; }
  static constexpr int kHiOffset = 32;
  static __attribute__((always_inline)) void step_words(const Packed& wb, int k, int c, __m256i& lo, __m256i& hi) {
    lo = hi = row_words(wb.qs + 32 * (kSteps * k + c));
  }
  static __attribute__((always_inline)) __m256 lane_codes(const Packed& wb, int k, int c, int i) {
    return nibble_lane_codes(wb.qs, kSteps * k + c, i);
  }
  // eight bytes, one per row, as floats
  static __attribute__((always_inline)) __m256 bytes8(const uint8_t* b) {
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b))));
  }
  static __attribute__((always_inline)) SpanScales scales(const Packed& wb, int k) {
    const __m256 d = halves8(wb.d);  // d x a 6-bit scale: exact
    return {_mm256_mul_ps(d, bytes8(wb.scales[2 * k])), _mm256_mul_ps(d, bytes8(wb.scales[2 * k + 1]))};
  }
  // -(dmin x min of sub-block 2k + j), exact; row i's two mins are bytes 2i, 2i + 1 of mins[k]
  static __attribute__((always_inline)) __m256 mins(const Packed& wb, int k, int j, const SpanScales&) {
    const __m128i pairs = _mm_loadu_si128(reinterpret_cast<const __m128i*>(wb.mins[k]));
    const __m128i words = j == 0 ? _mm_and_si128(pairs, _mm_set1_epi16(0xFF)) : _mm_srli_epi16(pairs, 8);
    const __m256 m = _mm256_mul_ps(halves8(wb.dmin), _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(words)));
    return _mm256_xor_ps(m, _mm256_set1_ps(-0.0f));
  }
};

// Q8_0: a step is two code pieces (elements 8c..8c+7), each code taken as code x 2^24, against the
// activations as they are and d 2^-24.
struct Bytes {
  using Packed = PackedQ8_0x8;
  static constexpr int kSteps = 4, kSpans = 1, kMins = 0;
  static constexpr bool kPrepared = false;
  // pshufb control for one 32-bit lane k (of four per 128 bits): its byte j to the top, zeros below
  // (a control byte with the top bit set gives a zero)
  static constexpr int32_t to_top(int j, int k) { return static_cast<int32_t>(0x808080u | (4u * k + j) << 24); }
  // step c: pieces 2c (codes e < 4) and 2c + 1
  static __attribute__((always_inline)) void step_words(const Packed& wb, int, int c, __m256i& lo, __m256i& hi) {
    lo = row_words(wb.qs + 32 * (2 * c));
    hi = row_words(wb.qs + 32 * (2 * c + 1));
  }
  // code e: byte e % 4 of its word moved to the top of the lane
  static __attribute__((always_inline)) __m256i code(int e, __m256i w) {
    const int j = e % 4;
    const __m256i control = _mm256_setr_epi32(to_top(j, 0), to_top(j, 1), to_top(j, 2), to_top(j, 3),
                                              to_top(j, 0), to_top(j, 1), to_top(j, 2), to_top(j, 3));
    return _mm256_shuffle_epi8(w, control);
  }
#if defined(__AVX512F__)
  // codes j and j + 4: byte j of each word shifted to the top, the bytes below it cleared
  static __attribute__((always_inline)) __m512i pair_code(int j, __m512i w) {
    const __m512i top = j < 3 ? _mm512_slli_epi32(w, static_cast<unsigned>(24 - 8 * j)) : w;
    return j == 0 ? top : _mm512_and_si512(top, _mm512_set1_epi32(static_cast<int32_t>(0xFF000000u)));
  }
#endif
  // step c of row i, code e in lane e
  static __attribute__((always_inline)) __m256 lane_codes(const Packed& wb, int, int c, int i) {
    int32_t lo, hi;
    std::memcpy(&lo, wb.qs + 32 * (2 * c) + 4 * i, sizeof lo);
    std::memcpy(&hi, wb.qs + 32 * (2 * c + 1) + 4 * i, sizeof hi);
    const __m256i q = _mm256_cvtepi8_epi32(_mm_setr_epi32(lo, hi, 0, 0));
    return _mm256_cvtepi32_ps(_mm256_slli_epi32(q, 24));
  }
  static __attribute__((always_inline)) SpanScales scales(const Packed& wb, int) {
    const __m256 d = _mm256_mul_ps(halves8(wb.d), _mm256_set1_ps(1.0f / static_cast<float>(1 << 24)));  // exact
    return {d, d};
  }
  static __m256 mins(const Packed&, int, int, const SpanScales&) { return _mm256_setzero_ps(); }
};

// Per lane e: the shift and mask that take code e out of a word of four codes of `bits` bits, one a
// byte (e < 4: the low run's word, else the high run's; code e lies in byte e % 4, the top byte
// shifted down), and 2^-8(e % 4) (1 for the top byte), the scale of its activation.
constexpr CodeLanes byte_code_lanes(int bits) {
  CodeLanes lanes{};
  for (int e = 0; e < kStepCodes; ++e) {
    const int power = e % 4 == 3 ? 0 : 8 * (e % 4);
    lanes.shift[e] = e % 4 == 3 ? 24 : 0;
    lanes.mask[e] = ((1 << bits) - 1) << power;
    lanes.scale[e] = 1.0f / static_cast<float>(1 << power);  // exact: a power of two
  }
  return lanes;
}
inline constexpr CodeLanes kFiveBitLanes = byte_code_lanes(5), kSixBitLanes = byte_code_lanes(6);

// Q5_0, Q5_1, Q5_K: the nibble format Base (Nibbles, KNibbles) with each code's fifth bit, from the
// fifth-bit words (packed_rows.h), joined to its nibble in the nibble's byte: the low run's codes
// in one word, the high run's in another, then taken in place as bytes.
template <class Base>
struct FifthBits : Base, LaneCodes<kFiveBitLanes> {
  using typename Base::Packed;
  using Base::kSteps;
  static constexpr const float* kLaneScale = kFiveBitLanes.scale;
  // the 5-bit codes of step c, from its nibble piece a and its fifth-bit word h: bits c % 4 (low run)
  // and 4 + c % 4 (high run) of each byte of h moved to bit 4
  static __attribute__((always_inline)) void join(__m256i a, __m256i h, int c, __m256i& lo, __m256i& hi) {
    const __m256i nib = _mm256_set1_epi32(0x0F0F0F0F), fifth = _mm256_set1_epi32(0x10101010);
    const int j = c % 4;
    lo = _mm256_or_si256(_mm256_and_si256(a, nib), _mm256_and_si256(_mm256_slli_epi32(h, 4 - j), fifth));
    hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(a, 4), nib), _mm256_and_si256(_mm256_srli_epi32(h, j), fifth));
  }
  // step c of span k: its nibble piece and fifth-bit word (slots of eight rows' 4-byte words)
  static constexpr int piece(int k, int c) { return kSteps * k + c; }
  static constexpr int word(int k, int c) { return piece(k, c) / 4; }
  using LaneCodes<kFiveBitLanes>::code;
#if defined(__AVX512F__)
  using LaneCodes<kFiveBitLanes>::pair_code;
#endif
  static __attribute__((always_inline)) void step_words(const Packed& wb, int k, int c, __m256i& lo, __m256i& hi) {
    join(row_words(wb.qs + 32 * piece(k, c)), row_words(wb.qh[word(k, c)][0]), c, lo, hi);
  }
  static __attribute__((always_inline)) __m256 lane_codes(const Packed& wb, int k, int c, int i) {
    __m256i lo, hi;
    join(broadcast_word(wb.qs + 32 * piece(k, c) + 4 * i), broadcast_word(wb.qh[word(k, c)][i]), c, lo, hi);
    // lanes 0..3 the low run's word, 4..7 the high run's
    return lane_codes_of(kFiveBitLanes, _mm256_blend_epi32(lo, hi, 0xF0));
  }
};

// Q6_K: a half of a block is four sub-blocks m = 0..3 of 32 elements; element 32m + l's code is a
// nibble of ql (pieces a for m = 0, 2, pieces b for m = 1, 3; the low nibbles for m < 2) topped with
// bits 2m, 2m + 1 of qh. Span k is quarter q (16 elements) of sub-blocks 2j and 2j + 1, each quarter
// with its scale; a code's nibble and two bits are joined in its byte, then taken in place.
struct SixBits : LaneCodes<kSixBitLanes> {
  using Packed = PackedQ6_Kx8;
  static constexpr int kSteps = 4, kSpans = QK_K / 32, kMins = 2;
  static constexpr bool kPrepared = true;
  // span k of a block: half h = k / 4, quarter q = k / 2 % 2 of the half's 32-element sub-blocks, j = k % 2
  static constexpr int half(int k) { return k / 4; }
  static constexpr int quarter(int k) { return k / 2 % 2; }
  static constexpr int pair(int k) { return k % 2; }
  static constexpr int64_t run_start(int64_t s) {
    const int k = static_cast<int>(s % kSpans);
    return s / kSpans * QK_K + 128 * half(k) + 64 * pair(k) + 16 * quarter(k);
  }
  static constexpr int kHiOffset = 32;
  static constexpr const float* kLaneScale = kSixBitLanes.scale;
  // the packed slot of step c's three pieces (ql, ql, qh: see PackedQ6_Kx8)
  static constexpr int slot(int k, int c) { return 3 * (8 * half(k) + 4 * quarter(k) + c); }
  // the 6-bit codes of sub-blocks m = 2j (lo, from pieces a) and 2j + 1 (hi, pieces b) in their bytes:
  // the nibble, then qh's bits 2m, 2m + 1 moved to bits 4, 5
  static __attribute__((always_inline)) void join(__m256i a, __m256i b, __m256i h, int j, __m256i& lo, __m256i& hi) {
    const __m256i nib = _mm256_set1_epi32(0x0F0F0F0F), top = _mm256_set1_epi32(0x30303030);
    if (j == 0) {
      lo = _mm256_or_si256(_mm256_and_si256(a, nib), _mm256_and_si256(_mm256_slli_epi32(h, 4), top));
      hi = _mm256_or_si256(_mm256_and_si256(b, nib), _mm256_and_si256(_mm256_slli_epi32(h, 2), top));
    } else {
      lo = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(a, 4), nib), _mm256_and_si256(h, top));
      hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(b, 4), nib), _mm256_and_si256(_mm256_srli_epi32(h, 2), top));
    }
  }
  static __attribute__((always_inline)) void step_words(const Packed& wb, int k, int c, __m256i& lo, __m256i& hi) {
    const uint8_t* p = wb.codes + 32 * slot(k, c);
    join(row_words(p), row_words(p + 32), row_words(p + 64), pair(k), lo, hi);
  }
  static __attribute__((always_inline)) __m256 lane_codes(const Packed& wb, int k, int c, int i) {
    const uint8_t* p = wb.codes + 32 * slot(k, c) + 4 * i;
    __m256i lo, hi;
    join(broadcast_word(p), broadcast_word(p + 32), broadcast_word(p + 64), pair(k), lo, hi);
    // lanes 0..3 the lower sub-block's word, 4..7 the upper's
    return lane_codes_of(kSixBitLanes, _mm256_blend_epi32(lo, hi, 0xF0));
  }
  // d x the 8-bit scales of the span's two 16-element groups, exact
  static __attribute__((always_inline)) SpanScales scales(const Packed& wb, int k) {
    const int g = 8 * half(k) + 4 * pair(k) + quarter(k);
    const auto bytes8 = [](const int8_t* b) {
      return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b))));
    };
    const __m256 d = halves8(wb.d);
    return {_mm256_mul_ps(d, bytes8(wb.scales[g])), _mm256_mul_ps(d, bytes8(wb.scales[g + 2]))};
  }
  // -32 x the scale of group j: the codes' offset, exact
  static __attribute__((always_inline)) __m256 mins(const Packed&, int, int j, const SpanScales& sc) {
    return _mm256_mul_ps(j == 0 ? sc.lo : sc.hi, _mm256_set1_ps(-32.0f));
  }
};

}  // namespace
}  // namespace inferscope::cpu::rows8_f32act
