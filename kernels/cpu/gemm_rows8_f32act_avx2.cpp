// AVX2 kernels of Q4_0, Q4_1, Q8_0 and Q4_K weights with f32 activations ("weight-only
// quantization") over rows packed eight at a time (packed_rows.h). A code meets its activation as an
// exact product and each scale comes in once per span of codes (each min once per 32 elements,
// against their activation sum), instead of every weight being dequantized first. A row's codes are
// read in spans of kSteps steps of eight, code(c, e) (step c, e = 0..7) against its activation x(c, e);
// per output (row, token) the operations are fixed:
//   a_e = 0, mins = 0                                                               e = 0..7
//   for each span s:  p_e = code(0, e) x(0, e);  for steps c = 1..kSteps-1: p_e = fma(code(c, e), x(c, e), p_e)
//                     a_e = fma(scale_s(e), p_e, a_e);  for each 32 elements j of s: mins = fma(m_j, xsum_j, mins)
//   output = (((a_0 + a_1) + (a_2 + a_3)) + ((a_4 + a_5) + (a_6 + a_7))) + mins
// Codes are taken where they lie in the packed bytes, as code x 2^k, exactly:
// - Q4_0, Q4_1: a span is a block (four steps); step c is code piece c (the code bytes 4c..4c+3);
//   e < 4: the low nibble of byte e, element 4c + e; else the high nibble of byte e - 4, element
//   4c + 12 + e. A nibble is masked in place and its activation comes scaled by 2^-k ("prepared":
//   reordered, scaled, with every 32 elements' sum xsum_j in a fixed order); scale d, min m (Q4_0:
//   -8 d, exact).
// - Q4_K: a span is sub-blocks 2k and 2k + 1 of a block (eight steps, pieces 8k..8k+7); the low
//   nibbles are sub-block 2k's elements 4c + e, the high ones sub-block 2k + 1's, so codes e < 4 take
//   the scale d x scale_2k and codes e >= 4 d x scale_2k+1 (both exact), the mins -dmin x min_j.
// - Q8_0: a span is a block; step c is pieces 2c and 2c + 1, code e element 8c + e; a signed byte is
//   moved to the top of its 32-bit lane (code x 2^24), the activations are used as they are and d
//   comes as d 2^-24, so p_e is 2^24 times the products' sum, rounded the same way. No mins.
// Every product is code x activation exactly unless an activation leaves f32's normal range when
// scaled (Q4: |x| < 2^-102; Q8_0: |x| > 2^97; the kernels agree with each other even then).
// One token keeps row i in lane i (code e of eight rows against one activation); several tokens keep
// code e in lane e (one row's step against eight activations), with every row's codes converted once
// for all of them. Each lane runs the same operations either way, so no output depends on the token
// count or the tile.
#include <cstring>
#include <new>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/packed_rows.h"
#include "kernels/cpu/packed_rows_driver.h"

namespace inferscope::cpu {
namespace {

constexpr int kStepCodes = 8;  // codes per step
constexpr int kMinElems = 32;  // elements per min (and per activation sum)

// Q4 code e of a piece: its bit in the 32-bit piece; the top nibble is shifted down to bit 0 first
// (in place it would be negative as an int32), so it is taken as itself and the rest as code x 2^bit.
constexpr int code_bit(int e) { return e < 4 ? 8 * e : 8 * (e - 4) + 4; }
constexpr int kTopCode = 7;
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
constexpr CodeLanes kCodeLanes = code_lanes();

// Nibble piece p of the eight rows, code e of row i in lane i of q[e]: in place, or (the top nibble)
// shifted down.
__attribute__((always_inline)) inline void nibble_row_codes(const uint8_t* qs, int p, __m256i (&q)[kStepCodes]) {
  const __m256i piece = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * p));
#pragma GCC unroll 8
  for (int e = 0; e < kStepCodes; ++e)
    q[e] = e == kTopCode ? _mm256_srli_epi32(piece, code_shift(e))
                         : _mm256_and_si256(piece, _mm256_set1_epi32(kCodeLanes.mask[e]));
}

// Nibble piece p of row i, code e in lane e.
__attribute__((always_inline)) inline __m256 nibble_lane_codes(const uint8_t* qs, int p, int i) {
  int32_t piece;
  std::memcpy(&piece, qs + 32 * p + 4 * i, sizeof piece);
  const __m256i shifts = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCodeLanes.shift));
  const __m256i masks = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCodeLanes.mask));
  return _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(piece), shifts), masks));
}

// The scales of a span, rows in lanes: of its codes e < 4 and e >= 4.
struct SpanScales {
  __m256 lo, hi;
};

// Each format: Packed, kSteps (steps per span), kSpans (spans per packed block), kMins (mins per
// span), kPrepared (activations prepared, else used as they are); row_codes / lane_codes of step c of
// span k of a packed block, scales(block, k), mins(block, k, j).

// Q4_0, Q4_1.
template <class P>
struct Nibbles {
  using Packed = P;
  static constexpr int kSteps = 4, kSpans = 1, kMins = 1;
  static constexpr bool kPrepared = true;
  static __attribute__((always_inline)) void row_codes(const P& wb, int, int c, __m256i (&q)[kStepCodes]) {
    nibble_row_codes(wb.qs, c, q);
  }
  static __attribute__((always_inline)) __m256 lane_codes(const P& wb, int, int c, int i) {
    return nibble_lane_codes(wb.qs, c, i);
  }
  static __attribute__((always_inline)) SpanScales scales(const P& wb, int) { return {halves8(wb.d), halves8(wb.d)}; }
  static __attribute__((always_inline)) __m256 mins(const P& wb, int, int) {
    if constexpr (requires { wb.m; }) return halves8(wb.m);
    return _mm256_mul_ps(halves8(wb.d), _mm256_set1_ps(-8.0f));
  }
};

// Q4_K: span k is sub-blocks 2k (the low nibbles) and 2k + 1 (the high ones).
struct KNibbles {
  using Packed = PackedQ4_Kx8;
  static constexpr int kSteps = 8, kSpans = QK_K / 64, kMins = 2;
  static constexpr bool kPrepared = true;
  static __attribute__((always_inline)) void row_codes(const Packed& wb, int k, int c, __m256i (&q)[kStepCodes]) {
    nibble_row_codes(wb.qs, kSteps * k + c, q);
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
  static __attribute__((always_inline)) __m256 mins(const Packed& wb, int k, int j) {
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
  // code e of step c of the eight rows, row i in lane i: byte e % 4 of piece 2c + e / 4 moved to the
  // top of the lane
  static __attribute__((always_inline)) void row_codes(const Packed& wb, int, int c, __m256i (&q)[kStepCodes]) {
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m256i piece = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb.qs + 32 * (2 * c + h)));
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __m256i control = _mm256_setr_epi32(to_top(j, 0), to_top(j, 1), to_top(j, 2), to_top(j, 3),
                                                  to_top(j, 0), to_top(j, 1), to_top(j, 2), to_top(j, 3));
        q[4 * h + j] = _mm256_shuffle_epi8(piece, control);
      }
    }
  }
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
  static __m256 mins(const Packed&, int, int) { return _mm256_setzero_ps(); }
};

// Elements per span.
template <class F>
constexpr int kSpanElems = kStepCodes * F::kSteps;

// One token's activations as a prepared format reads them: xs[S s + 8 c + e] = x(c, e) of span s
// (S elements: e < 4 the element 4c + e of its first half, else 4c + e - 4 of its second) times
// 2^-code_power(e) (exact), then, after n of those, xsum[j] = (x0..7 + x8..15) + (x16..23 + x24..31),
// then hsum, of every 32 elements.
template <int S>
void prepare(const float* x, int64_t n, float* xs) {
  const __m256 scale = _mm256_load_ps(kCodeLanes.scale);
  for (int64_t s = 0; s < n / S; ++s) {
    const float* xb = x + s * S;
    for (int c = 0; c < S / kStepCodes; ++c) {
      const __m256 v = _mm256_set_m128(_mm_loadu_ps(xb + S / 2 + 4 * c), _mm_loadu_ps(xb + 4 * c));
      _mm256_storeu_ps(xs + s * S + kStepCodes * c, _mm256_mul_ps(v, scale));
    }
  }
  float* xsum = xs + n;
  for (int64_t j = 0; j < n / kMinElems; ++j) {
    const float* xj = x + j * kMinElems;
    const __m256 lo = _mm256_add_ps(_mm256_loadu_ps(xj), _mm256_loadu_ps(xj + 8));
    const __m256 hi = _mm256_add_ps(_mm256_loadu_ps(xj + 16), _mm256_loadu_ps(xj + 24));
    xsum[j] = hsum(_mm256_add_ps(lo, hi));
  }
}

// ((v_0 + v_1) + (v_2 + v_3)) + ((v_4 + v_5) + (v_6 + v_7)), lane by lane.
__attribute__((always_inline)) inline __m256 tree8(const __m256 (&v)[kStepCodes]) {
  return _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(v[0], v[1]), _mm256_add_ps(v[2], v[3])),
                       _mm256_add_ps(_mm256_add_ps(v[4], v[5]), _mm256_add_ps(v[6], v[7])));
}

// The same tree over the lanes of each v[i], into lane i. hadd pairs lanes within each 128-bit half
// (lanes 0..3, then 4..7).
__attribute__((always_inline)) inline __m256 lane_tree8(const __m256 (&v)[kPackedRows]) {
  const __m256 rows0_3 = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
  const __m256 rows4_7 = _mm256_hadd_ps(_mm256_hadd_ps(v[4], v[5]), _mm256_hadd_ps(v[6], v[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(rows0_3, rows4_7, 0x20), _mm256_permute2f128_ps(rows0_3, rows4_7, 0x31));
}

// One token, row i in lane i, over n_spans spans: xs is the token's activations (prepared for the
// nibble formats), xsum its sums of 32 elements.
template <class F>
void run_one(const typename F::Packed* w, int64_t n_spans, const float* xs, const float* xsum, float* out) {
  const __m256 zero = _mm256_setzero_ps();
  __m256 a[kStepCodes] = {zero, zero, zero, zero, zero, zero, zero, zero}, mins = zero;
  for (int64_t s = 0; s < n_spans; ++s) {
    const typename F::Packed& wb = w[s / F::kSpans];
    const int k = static_cast<int>(s % F::kSpans);
    if (k == 0) prefetch_ahead(wb);
    const float* xb = xs + s * kSpanElems<F>;
    __m256 p[kStepCodes];
#pragma GCC unroll 8
    for (int c = 0; c < F::kSteps; ++c) {
      __m256i q[kStepCodes];
      F::row_codes(wb, k, c, q);
#pragma GCC unroll 8
      for (int e = 0; e < kStepCodes; ++e) {
        const __m256 code = _mm256_cvtepi32_ps(q[e]), x = _mm256_broadcast_ss(xb + kStepCodes * c + e);
        p[e] = c == 0 ? _mm256_mul_ps(code, x) : _mm256_fmadd_ps(code, x, p[e]);
      }
    }
    const SpanScales sc = F::scales(wb, k);
#pragma GCC unroll 8
    for (int e = 0; e < kStepCodes; ++e) a[e] = _mm256_fmadd_ps(e < 4 ? sc.lo : sc.hi, p[e], a[e]);
#pragma GCC unroll 2
    for (int j = 0; j < F::kMins; ++j)
      mins = _mm256_fmadd_ps(F::mins(wb, k, j), _mm256_broadcast_ss(xsum + s * F::kMins + j), mins);
  }
  _mm256_storeu_ps(out, _mm256_add_ps(tree8(a), mins));
}

// Floats per span of a converted group: codes (row i's step c, code e in lane e, at
// (kSteps i + c) * 8), then row i's scales by code lane at 8 kSteps * 8 + 8 i, then the rows' mins.
template <class F>
constexpr int kCodeFloats = kPackedRows * F::kSteps * kStepCodes;
template <class F>
constexpr int kConvertedFloats = kCodeFloats<F> + kPackedRows * kStepCodes + F::kMins * kPackedRows;

// Spans [s0, s0 + n_spans) of a group converted for the several-token path.
template <class F>
void convert_group(const typename F::Packed* w, int64_t s0, int64_t n_spans, float* converted) {
  for (int64_t s = 0; s < n_spans; ++s) {
    const typename F::Packed& wb = w[(s0 + s) / F::kSpans];
    const int k = static_cast<int>((s0 + s) % F::kSpans);
    float* cs = converted + s * kConvertedFloats<F>;
    for (int i = 0; i < kPackedRows; ++i)
      for (int c = 0; c < F::kSteps; ++c)
        _mm256_store_ps(cs + (F::kSteps * i + c) * kStepCodes, F::lane_codes(wb, k, c, i));
    // row i's scale in every lane of its codes: lanes 0..3 the lo scale, 4..7 the hi one
    alignas(32) float lo[kPackedRows], hi[kPackedRows];
    const SpanScales sc = F::scales(wb, k);
    _mm256_store_ps(lo, sc.lo);
    _mm256_store_ps(hi, sc.hi);
    float* scales = cs + kCodeFloats<F>;
    for (int i = 0; i < kPackedRows; ++i)
      _mm256_store_ps(scales + i * kStepCodes, _mm256_set_m128(_mm_set1_ps(hi[i]), _mm_set1_ps(lo[i])));
    for (int j = 0; j < F::kMins; ++j)
      _mm256_store_ps(scales + kPackedRows * kStepCodes + j * kPackedRows, F::mins(wb, k, j));
  }
}

// Several tokens, code e in lane e: one token over n_spans converted spans (convert_group), its
// activations at xs and sums of 32 elements at xsum, carrying its accumulators in acc (a_0..7, then
// mins, eight floats each).
template <class F>
void run_converted(const float* converted, int64_t n_spans, const float* xs, const float* xsum, float* acc) {
  __m256 a[kPackedRows], mins = _mm256_load_ps(acc + kPackedRows * kPackedRows);
#pragma GCC unroll 8
  for (int i = 0; i < kPackedRows; ++i) a[i] = _mm256_load_ps(acc + i * kPackedRows);
  for (int64_t s = 0; s < n_spans; ++s) {
    const float* xb = xs + s * kSpanElems<F>;
    const float* cs = converted + s * kConvertedFloats<F>;
    const float* scales = cs + kCodeFloats<F>;
    __m256 x[F::kSteps];
#pragma GCC unroll 8
    for (int c = 0; c < F::kSteps; ++c) x[c] = _mm256_loadu_ps(xb + kStepCodes * c);
#pragma GCC unroll 8
    for (int i = 0; i < kPackedRows; ++i) {
      const float* ci = cs + F::kSteps * i * kStepCodes;
      __m256 p = _mm256_mul_ps(_mm256_load_ps(ci), x[0]);
#pragma GCC unroll 8
      for (int c = 1; c < F::kSteps; ++c) p = _mm256_fmadd_ps(_mm256_load_ps(ci + c * kStepCodes), x[c], p);
      a[i] = _mm256_fmadd_ps(_mm256_load_ps(scales + i * kStepCodes), p, a[i]);
    }
#pragma GCC unroll 2
    for (int j = 0; j < F::kMins; ++j)
      mins = _mm256_fmadd_ps(_mm256_load_ps(scales + kPackedRows * kStepCodes + j * kPackedRows),
                             _mm256_broadcast_ss(xsum + s * F::kMins + j), mins);
  }
#pragma GCC unroll 8
  for (int i = 0; i < kPackedRows; ++i) _mm256_store_ps(acc + i * kPackedRows, a[i]);
  _mm256_store_ps(acc + kPackedRows * kPackedRows, mins);
}

constexpr int kAccFloats = (kPackedRows + 1) * kPackedRows;  // one token's accumulators: a_0..7, mins

// The eight outputs of one token from its accumulators.
void finish_converted(const float* acc, float* out) {
  __m256 a[kPackedRows];
#pragma GCC unroll 8
  for (int i = 0; i < kPackedRows; ++i) a[i] = _mm256_load_ps(acc + i * kPackedRows);
  _mm256_storeu_ps(out, _mm256_add_ps(lane_tree8(a), _mm256_load_ps(acc + kPackedRows * kPackedRows)));
}

// Elements of a group converted at once: their codes (16 KiB) stay in L1 while every token passes
// over them (read from L2 token after token, the codes of a whole group made prefill 20% slower).
constexpr int64_t kConvertedElems = 512;

constexpr size_t kPreparedBytes = 4 << 20;  // the tokens prepared at once take this much at most

// Floats that grow on demand and stay with the thread (prepared activations, converted codes). The
// allocation is the library's operator new (this file keeps to out-of-line library functions).
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { release(); }
  float* get(size_t floats) {
    if (floats > capacity_) {
      release();
      data_ = static_cast<float*>(::operator new(floats * sizeof(float), kAlign));
      capacity_ = floats;
    }
    return data_;
  }

 private:
  static constexpr std::align_val_t kAlign{32};
  void release() {
    if (data_ != nullptr) ::operator delete(data_, kAlign);
    data_ = nullptr;
    capacity_ = 0;
  }
  float* data_ = nullptr;
  size_t capacity_ = 0;
};

thread_local Scratch prepared_scratch, codes_scratch;

// Packed groups x n_tok tokens of n columns whose activations (as run_one reads them, then with the
// nibble formats their sums of 32 elements) are xs_stride floats apart: one token runs each group in
// registers, several run each group's converted codes token after token.
template <class F>
void run_groups(const void* w, size_t group_stride, int64_t n_groups, const float* xs, int64_t xs_stride,
                int64_t n_tok, int64_t n, float* out, int64_t out_stride) {
  const auto group = [&](int64_t g) {
    return reinterpret_cast<const typename F::Packed*>(static_cast<const uint8_t*>(w) + g * group_stride);
  };
  const int64_t n_spans = n / kSpanElems<F>;
  if (n_tok == 1) {
    const float* xsum = F::kMins > 0 ? xs + n : nullptr;
    for (int64_t g = 0; g < n_groups; ++g) run_one<F>(group(g), n_spans, xs, xsum, out + g * kPackedRows);
    return;
  }
  constexpr int64_t kChunk = kConvertedElems / kSpanElems<F>;  // spans converted at once
  static_assert(kChunk % F::kSpans == 0, "a chunk holds whole packed blocks");
  float* converted = codes_scratch.get(static_cast<size_t>(kChunk * kConvertedFloats<F> + n_tok * kAccFloats));
  float* acc = converted + kChunk * kConvertedFloats<F>;
  for (int64_t g = 0; g < n_groups; ++g) {
    for (int64_t i = 0; i < n_tok * kAccFloats; ++i) acc[i] = 0.0f;
    // a chunk of spans converted, then every token over it, its accumulators carried to the next
    for (int64_t s0 = 0; s0 < n_spans; s0 += kChunk) {
      const int64_t ns = n_spans - s0 < kChunk ? n_spans - s0 : kChunk;
      convert_group<F>(group(g), s0, ns, converted);
      for (int64_t t = 0; t < n_tok; ++t) {
        const float* xt = xs + t * xs_stride;
        const float* xsum = F::kMins > 0 ? xt + n + s0 * F::kMins : nullptr;
        run_converted<F>(converted, ns, xt + s0 * kSpanElems<F>, xsum, acc + t * kAccFloats);
      }
    }
    for (int64_t t = 0; t < n_tok; ++t) finish_converted(acc + t * kAccFloats, out + t * out_stride + g * kPackedRows);
  }
}

// PackedGemmFn. The nibble formats prepare the tokens in strips of as many as kPreparedBytes holds
// (all of them but for very long batches of very wide rows); Q8_0 reads the activations as they are.
template <class F>
void gemm_packed(const void* w, size_t group_stride, int64_t n_groups, const void* a, size_t a_stride, int64_t n_tok,
                 int64_t n, float* out, int64_t out_stride) {
  const auto* x = static_cast<const float*>(a);
  const int64_t x_stride = static_cast<int64_t>(a_stride / sizeof(float));
  if constexpr (!F::kPrepared) {
    run_groups<F>(w, group_stride, n_groups, x, x_stride, n_tok, n, out, out_stride);
  } else {
    static_assert(F::kMins * kMinElems == kSpanElems<F>, "a prepared span's mins cover it");
    const int64_t per_token = n + n / kMinElems;  // prepared floats: xs, then xsum
    const int64_t fit = static_cast<int64_t>(kPreparedBytes / (sizeof(float) * per_token));
    const int64_t strip = fit < 1 ? 1 : fit < n_tok ? fit : n_tok;
    float* prepared = prepared_scratch.get(static_cast<size_t>(strip * per_token));
    for (int64_t t0 = 0; t0 < n_tok; t0 += strip) {
      const int64_t nt = n_tok - t0 < strip ? n_tok - t0 : strip;
      for (int64_t t = 0; t < nt; ++t) prepare<kSpanElems<F>>(x + (t0 + t) * x_stride, n, prepared + t * per_token);
      run_groups<F>(w, group_stride, n_groups, prepared, per_token, nt, n, out + t0 * out_stride, out_stride);
    }
  }
}

template <class F, DType kType>
constexpr DotKernel kernel{DType::F32,
                           nullptr,
                           dot_packing_on_the_fly<gemm_packed<F>, kType>,
                           gemm_packing_on_the_fly<gemm_packed<F>, kType>,
                           "avx2",
                           gemm_packed<F>,
                           F::kPrepared};

}  // namespace

const DotKernel* avx2_rows8_f32act_kernel(DType weight_type) {
  switch (weight_type) {
    case DType::Q4_0: return &kernel<Nibbles<PackedQ4_0x8>, DType::Q4_0>;
    case DType::Q4_1: return &kernel<Nibbles<PackedQ4_1x8>, DType::Q4_1>;
    case DType::Q8_0: return &kernel<Bytes, DType::Q8_0>;
    case DType::Q4_K: return &kernel<KNibbles, DType::Q4_K>;
    default: return nullptr;
  }
}

}  // namespace inferscope::cpu
