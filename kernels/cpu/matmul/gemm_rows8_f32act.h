// The exact kernels of the quantized weight types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K):
// f32 activations ("weight-only quantization") over rows packed eight at a time (packed_rows.h). A
// code meets its activation as an exact product and each scale comes in once per span of codes (each
// min, or code offset, once per run of elements it covers, against their activation sum), instead of
// every weight being dequantized first. A row's codes are read in spans of kSteps steps of eight,
// code(c, e) (step c, e = 0..7) against its activation x(c, e); per output (row, token) the
// operations are fixed:
//   a_e = 0, mins = 0                                                               e = 0..7
//   for each span s:  p_e = code(0, e) x(0, e);  for steps c = 1..kSteps-1: p_e = fma(code(c, e), x(c, e), p_e)
//                     a_e = fma(scale_s(e), p_e, a_e);  for each min j of s: mins = fma(m_j, xsum_j, mins)
//   output = (((a_0 + a_1) + (a_2 + a_3)) + ((a_4 + a_5) + (a_6 + a_7))) + mins
// Each format's codes are taken where they lie in the packed bytes, as code x 2^k, exactly
// (gemm_rows8_f32act_formats.h). Every product is code x activation exactly unless an activation leaves
// f32's normal range when scaled (|x| below 2^-102 for the prepared formats, above 2^97 for Q8_0;
// the kernels agree with each other even then).
// One token keeps row i in lane i (code e of eight rows against one activation); up to
// kRegisterTokens do too, two at a time, each code converted once for both (run_tokens; the AVX-512
// build runs codes e and e + 4 side by side on 512-bit vectors, up to four tokens at a time:
// run_tokens_paired); more keep code e in lane e (one row's step against eight activations), with
// every row's codes converted once for all of them. The AVX-512 build runs those in token pairs, one
// token in each half of a 512-bit vector, two pairs at once where registers allow
// (run_converted_pairs). Each lane runs the same operations every way, so no output depends on the
// token count, the tile or the build.
//
// Internal to gemm_rows8_f32act_avx2.cpp and gemm_rows8_f32act_avx512vl.cpp, which compile it for
// AVX2 and for AVX-512VL (the same operations, so the same bits): everything here has internal
// linkage, so neither build's code can stand in for the other's at link time.
#pragma once
#include <cstring>
#include <new>
#include <type_traits>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/matmul/packed_rows.h"
#include "kernels/cpu/matmul/gemm_rows8_driver.h"
#include "kernels/cpu/matmul/gemm_rows8_f32act_formats.h"

namespace inferscope::cpu {
namespace {

using namespace rows8_f32act;

// Elements per span.
template <class F>
constexpr int kSpanElems = kStepCodes * F::kSteps;

// The sum of L consecutive elements as one vector, halves added pairwise down to 8.
template <int L>
__attribute__((always_inline)) inline __m256 run_sum8(const float* r) {
  if constexpr (L == kStepCodes) return _mm256_loadu_ps(r);
  else return _mm256_add_ps(run_sum8<L / 2>(r), run_sum8<L / 2>(r + L / 2));
}

// Where prepare writes one token: step q's eight floats at step_stride q, then span s's sums from
// `sums`, each run's sum_copies times at sum_stride (kMins s + j).
struct PreparedLayout {
  int64_t step_stride, sums, sum_stride;
  int sum_copies;
};

// The layout run_tokens and run_converted read: steps one after another, then one float per sum.
constexpr PreparedLayout plain_layout(int64_t n) { return {kStepCodes, n, 1, 1}; }

// One token's activations as a prepared format reads them. Span s is two runs of S / 2 elements, at
// lo = F::run_start(s) and hi = lo + F::kHiOffset: step S s / 8 + c holds x[lo + 4c + e] (e < 4) or
// x[hi + 4c + e - 4] times the lane's scale F::kLaneScale[e] (a power of two: exact); then, after n
// of those, the span's sums in a fixed order: of both runs (one min per span) or of each run.
template <class F>
void prepare(const float* x, int64_t n, float* xs, const PreparedLayout& at) {
  constexpr int S = kSpanElems<F>, kRun = S / 2;
  const __m256 scale = _mm256_load_ps(F::kLaneScale);
  const auto put_sum = [&](int64_t j, float sum) {
    for (int k = 0; k < at.sum_copies; ++k) xs[at.sums + at.sum_stride * j + k] = sum;
  };
  for (int64_t s = 0; s < n / S; ++s) {
    const float* lo = x + F::run_start(s);
    const float* hi = lo + F::kHiOffset;
    for (int c = 0; c < S / kStepCodes; ++c) {
      const __m256 v = _mm256_set_m128(_mm_loadu_ps(hi + 4 * c), _mm_loadu_ps(lo + 4 * c));
      _mm256_storeu_ps(xs + at.step_stride * (s * S / kStepCodes + c), _mm256_mul_ps(v, scale));
    }
    if constexpr (F::kMins == 1) {
      put_sum(s, hsum(_mm256_add_ps(run_sum8<kRun>(lo), run_sum8<kRun>(hi))));
    } else {
      put_sum(2 * s, hsum(run_sum8<kRun>(lo)));
      put_sum(2 * s + 1, hsum(run_sum8<kRun>(hi)));
    }
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

// T tokens at once, row i in lane i, over n_spans spans: token t's activations at xs[t] (as prepare
// made them, for the prepared formats), the sums its mins meet at xsum[t] (kMins a span), its eight
// outputs to out[t]. Each code is converted once for all T tokens; each token gets the same operations
// whatever T is.
template <class F, int T>
void run_tokens(const typename F::Packed* w, int64_t n_spans, const float* const (&xs)[T], const float* const (&xsum)[T],
                float* const (&out)[T]) {
  const __m256 zero = _mm256_setzero_ps();
  __m256 a[T][kStepCodes], mins[T];
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) {
    mins[t] = zero;
#pragma GCC unroll 8
    for (int e = 0; e < kStepCodes; ++e) a[t][e] = zero;
  }
  for (int64_t s = 0; s < n_spans; ++s) {
    const typename F::Packed& wb = w[s / F::kSpans];
    const int k = static_cast<int>(s % F::kSpans);
    if (k == 0) prefetch_ahead(wb);
    __m256 p[T][kStepCodes];
#pragma GCC unroll 8
    for (int c = 0; c < F::kSteps; ++c) {
      __m256i lo, hi;
      F::step_words(wb, k, c, lo, hi);
#pragma GCC unroll 8
      for (int e = 0; e < kStepCodes; ++e) {
        const __m256 code = _mm256_cvtepi32_ps(F::code(e, e < 4 ? lo : hi));
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          const __m256 x = _mm256_broadcast_ss(xs[t] + s * kSpanElems<F> + kStepCodes * c + e);
          p[t][e] = c == 0 ? _mm256_mul_ps(code, x) : _mm256_fmadd_ps(code, x, p[t][e]);
        }
      }
    }
    const SpanScales sc = F::scales(wb, k);
#pragma GCC unroll 4
    for (int t = 0; t < T; ++t) {
#pragma GCC unroll 8
      for (int e = 0; e < kStepCodes; ++e) a[t][e] = _mm256_fmadd_ps(e < 4 ? sc.lo : sc.hi, p[t][e], a[t][e]);
    }
#pragma GCC unroll 2
    for (int j = 0; j < F::kMins; ++j) {
      const __m256 m = F::mins(wb, k, j, sc);
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) mins[t] = _mm256_fmadd_ps(m, _mm256_broadcast_ss(xsum[t] + s * F::kMins + j), mins[t]);
    }
  }
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) _mm256_storeu_ps(out[t], _mm256_add_ps(tree8(a[t]), mins[t]));
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
      _mm256_store_ps(scales + kPackedRows * kStepCodes + j * kPackedRows, F::mins(wb, k, j, sc));
  }
}

// The eight outputs of one token from its accumulators: each row's lanes summed by tree8, plus the mins.
__attribute__((always_inline)) inline void finish_outputs(const __m256 (&a)[kPackedRows], __m256 mins, float* out) {
  _mm256_storeu_ps(out, _mm256_add_ps(lane_tree8(a), mins));
}

// Where a chunk's run takes its accumulators from (zeros, for a group's first chunk, or acc) and where
// it leaves them (acc, or, after the group's last chunk, the outputs).
struct ChunkEnds {
  bool first, last;
};

// Several tokens, code e in lane e: one token over n_spans converted spans (convert_group), its
// activations at xs and the sums its mins meet at xsum, carrying its accumulators in acc (a_0..7, then
// mins, eight floats each) from chunk to chunk, its eight outputs to out after the last.
template <class F>
void run_converted(const float* converted, int64_t n_spans, const float* xs, const float* xsum, float* acc,
                   ChunkEnds ends, float* out) {
  __m256 a[kPackedRows], mins = ends.first ? _mm256_setzero_ps() : _mm256_load_ps(acc + kPackedRows * kPackedRows);
#pragma GCC unroll 8
  for (int i = 0; i < kPackedRows; ++i) a[i] = ends.first ? _mm256_setzero_ps() : _mm256_load_ps(acc + i * kPackedRows);
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
  if (ends.last) return finish_outputs(a, mins, out);
#pragma GCC unroll 8
  for (int i = 0; i < kPackedRows; ++i) _mm256_store_ps(acc + i * kPackedRows, a[i]);
  _mm256_store_ps(acc + kPackedRows * kPackedRows, mins);
}

constexpr int kAccFloats = (kPackedRows + 1) * kPackedRows;  // one token's accumulators: a_0..7, mins

#if defined(__AVX512F__)
// Two tokens side by side in 512-bit vectors (the AVX-512 build): token t in the low eight lanes, token
// t + 1 in the high eight. Each lane runs run_converted's operations in its order, so each token's
// outputs are the ones run_converted gives it, bit for bit; each code and scale load serves both.
constexpr int kPairLanes = 2 * kStepCodes;

// Floats of a token pair's interleaved activations: each step of eight as sixteen (t's, then t + 1's),
// then, for the formats with mins, each span's sums as sixteen (eight copies of t's, then of t + 1's).
template <class F>
constexpr int64_t pair_floats(int64_t n) {
  return 2 * n + n / kSpanElems<F> * F::kMins * kPairLanes;
}

// Tokens t and t + 1 from their activations x0 and x1 as they come, side by side: each prepared (Q8_0:
// copied) into its half of every sixteen floats, its sums (eight copies each) in its half after 2 n.
template <class F>
void pair_up(const float* x0, const float* x1, int64_t n, float* out) {
  const float* const x[2] = {x0, x1};
  for (int h = 0; h < 2; ++h) {
    float* half = out + h * kStepCodes;
    if constexpr (F::kPrepared) {
      prepare<F>(x[h], n, half, PreparedLayout{kPairLanes, 2 * n, kPairLanes, kStepCodes});
    } else {
      for (int64_t q = 0; q < n / kStepCodes; ++q) {
        _mm256_storeu_ps(half + kPairLanes * q, _mm256_loadu_ps(x[h] + kStepCodes * q));
      }
    }
  }
}

// Eight floats from `p` in both halves of a 512-bit vector (one load; the 64-bit broadcast is AVX-512F's).
__attribute__((always_inline)) inline __m512 both_halves(const float* p) {
  // The masked form, every lane taken: GCC 12 makes the plain one a load and a shuffle (6- and
  // 8-token steps 5-10% slower).
  return _mm512_castpd_ps(_mm512_mask_broadcast_f64x4(_mm512_setzero_pd(), 0xFF, _mm256_castps_pd(_mm256_load_ps(p))));
}

// run_converted for P token pairs at once, each code and scale load serving all of them: pair q's
// interleaved activations at xp[q] and sums at xsum[q] (from span 0 of the chunk), its accumulators at
// acc[q] (a_0..7, then mins, sixteen floats each: t's eight, then t + 1's), its tokens' outputs at
// out[q][0] and out[q][1] after the group's last chunk. R rows run side by side:
// one pair's eight rows (eight chains of products fill the FMA pipes; one row at a time, the K-quants'
// eight-step chains left half of them idle: 1B Q4_K pp512 73-77 t/s against 83-88 on a Xeon), or two
// pairs' rows one at a time (two chains a row; two rows at once measured the same).
template <class F, int P, int R = (P == 1 ? kPackedRows : 1)>
void run_converted_pairs(const float* converted, int64_t n_spans, const float* const (&xp)[P], const float* const (&xsum)[P],
                         float* const (&acc)[P], ChunkEnds ends, float* const (&out)[P][2]) {
  __m512 a[P][kPackedRows], mins[P];
#pragma GCC unroll 2
  for (int q = 0; q < P; ++q) {
    mins[q] = ends.first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc[q] + kPackedRows * kPairLanes);
#pragma GCC unroll 8
    for (int i = 0; i < kPackedRows; ++i) a[q][i] = ends.first ? _mm512_setzero_ps() : _mm512_loadu_ps(acc[q] + i * kPairLanes);
  }
  for (int64_t s = 0; s < n_spans; ++s) {
    const float* cs = converted + s * kConvertedFloats<F>;
    const float* scales = cs + kCodeFloats<F>;
    __m512 x[P][F::kSteps];
#pragma GCC unroll 2
    for (int q = 0; q < P; ++q) {
#pragma GCC unroll 8
      for (int c = 0; c < F::kSteps; ++c) x[q][c] = _mm512_loadu_ps(xp[q] + s * 2 * kSpanElems<F> + kPairLanes * c);
    }
    // R rows at a time, step by step, so that their R x P product chains stand side by side in the
    // instruction stream, within the out-of-order window
#pragma GCC unroll 8
    for (int i0 = 0; i0 < kPackedRows; i0 += R) {
      __m512 p[R][P];
#pragma GCC unroll 8
      for (int c = 0; c < F::kSteps; ++c) {
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
          const __m512 code = both_halves(cs + (F::kSteps * (i0 + r) + c) * kStepCodes);
#pragma GCC unroll 2
          for (int q = 0; q < P; ++q) {
            p[r][q] = c == 0 ? _mm512_mul_ps(code, x[q][0]) : _mm512_fmadd_ps(code, x[q][c], p[r][q]);
          }
        }
      }
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        const __m512 scale = both_halves(scales + (i0 + r) * kStepCodes);
#pragma GCC unroll 2
        for (int q = 0; q < P; ++q) a[q][i0 + r] = _mm512_fmadd_ps(scale, p[r][q], a[q][i0 + r]);
      }
    }
#pragma GCC unroll 2
    for (int j = 0; j < F::kMins; ++j) {
      const __m512 m = both_halves(scales + kPackedRows * kStepCodes + j * kPackedRows);
#pragma GCC unroll 2
      for (int q = 0; q < P; ++q)
        mins[q] = _mm512_fmadd_ps(m, _mm512_loadu_ps(xsum[q] + (s * F::kMins + j) * kPairLanes), mins[q]);
    }
  }
#pragma GCC unroll 2
  for (int q = 0; q < P; ++q) {
    if (ends.last) {
      // each token's half through finish_outputs, as run_converted finishes it
      __m256 lo[kPackedRows], hi[kPackedRows];
#pragma GCC unroll 8
      for (int i = 0; i < kPackedRows; ++i) {
        lo[i] = _mm512_castps512_ps256(a[q][i]);
        hi[i] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a[q][i]), 1));
      }
      finish_outputs(lo, _mm512_castps512_ps256(mins[q]), out[q][0]);
      finish_outputs(hi, _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(mins[q]), 1)), out[q][1]);
      continue;
    }
#pragma GCC unroll 8
    for (int i = 0; i < kPackedRows; ++i) _mm512_storeu_ps(acc[q] + i * kPairLanes, a[q][i]);
    _mm512_storeu_ps(acc[q] + kPackedRows * kPairLanes, mins[q]);
  }
}

// The register path on 512-bit vectors (the AVX-512 build): row i's codes j and j + 4 side by side in
// lanes 2i and 2i + 1 (pair_words), so each conversion and multiply-add covers sixteen codes, twice
// run_tokens' eight. Each lane runs run_tokens' operations for its code in their order, so the outputs
// are run_tokens', bit for bit.

// A token's activations (as run_tokens reads them) with each step's eight reordered 0, 4, 1, 5, 2, 6,
// 3, 7: x(c, j) and x(c, j + 4) side by side, one 64-bit broadcast away from their lanes.
void pair_order(const float* x, int64_t n, float* out) {
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int64_t q = 0; q < n; q += kStepCodes) _mm256_storeu_ps(out + q, _mm256_permutevar8x32_ps(_mm256_loadu_ps(x + q), order));
}

// x(c, j) in lanes 2i and x(c, j + 4) in lanes 2i + 1, from pair_order's floats at p.
__attribute__((always_inline)) inline __m512 pair_activations(const float* p) {
  double both;
  std::memcpy(&both, p, sizeof both);
  return _mm512_castpd_ps(_mm512_set1_pd(both));
}

// Tokens at once. Four spill a few accumulators out of the 32 registers (more with the K-quants'
// eight step words a span), yet beat three and one: a 4-token step of the 1B Q4_K_M shape 64-70 ms
// against 80-82.
constexpr int kPairedTokens = 4;

// run_tokens on 512-bit vectors: T tokens, row i's codes j, j + 4 in lanes 2i, 2i + 1, token t's
// activations at xs[t] (pair_order's), the sums its mins meet at xsum[t], its eight outputs to out[t].
// Each span's words are paired once; the loop runs code pair j over the span's steps, so only one
// product per token is live.
template <class F, int T>
void run_tokens_paired(const typename F::Packed* w, int64_t n_spans, const float* const (&xs)[T],
                       const float* const (&xsum)[T], float* const (&out)[T]) {
  constexpr int kPairs = kStepCodes / 2;
  __m512 a[T][kPairs];
  __m256 mins[T];
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) {
    mins[t] = _mm256_setzero_ps();
#pragma GCC unroll 4
    for (int j = 0; j < kPairs; ++j) a[t][j] = _mm512_setzero_ps();
  }
  for (int64_t s = 0; s < n_spans; ++s) {
    const typename F::Packed& wb = w[s / F::kSpans];
    const int k = static_cast<int>(s % F::kSpans);
    if (k == 0) prefetch_ahead(wb);
    __m512i words[F::kSteps];
#pragma GCC unroll 8
    for (int c = 0; c < F::kSteps; ++c) {
      __m256i lo, hi;
      F::step_words(wb, k, c, lo, hi);
      words[c] = pair_words(lo, hi);
    }
    const SpanScales sc = F::scales(wb, k);
    const __m512 scale = _mm512_castsi512_ps(pair_words(_mm256_castps_si256(sc.lo), _mm256_castps_si256(sc.hi)));
#pragma GCC unroll 4
    for (int j = 0; j < kPairs; ++j) {
      __m512 p[T];
#pragma GCC unroll 8
      for (int c = 0; c < F::kSteps; ++c) {
        const __m512 code = _mm512_cvtepi32_ps(F::pair_code(j, words[c]));
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          const __m512 x = pair_activations(xs[t] + s * kSpanElems<F> + kStepCodes * c + 2 * j);
          p[t] = c == 0 ? _mm512_mul_ps(code, x) : _mm512_fmadd_ps(code, x, p[t]);
        }
      }
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) a[t][j] = _mm512_fmadd_ps(scale, p[t], a[t][j]);
    }
#pragma GCC unroll 2
    for (int j = 0; j < F::kMins; ++j) {
      const __m256 m = F::mins(wb, k, j, sc);
#pragma GCC unroll 4
      for (int t = 0; t < T; ++t) mins[t] = _mm256_fmadd_ps(m, _mm256_broadcast_ss(xsum[t] + s * F::kMins + j), mins[t]);
    }
  }
  // lanes 2i (codes e < 4) to the low half, 2i + 1 to the high one
  const __m512i split = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
#pragma GCC unroll 4
  for (int t = 0; t < T; ++t) {
    // tree8's sums: (a_0 + a_1) + (a_2 + a_3) in the low half, (a_4 + a_5) + (a_6 + a_7) in the high one
    const __m512 halves = _mm512_permutexvar_ps(
        split, _mm512_add_ps(_mm512_add_ps(a[t][0], a[t][1]), _mm512_add_ps(a[t][2], a[t][3])));
    const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(halves), 1));
    _mm256_storeu_ps(out[t], _mm256_add_ps(_mm256_add_ps(_mm512_castps512_ps256(halves), hi), mins[t]));
  }
}

// Pairs run at once: two where their activations stay in registers with the accumulators (32 of
// them), one for the formats of eight steps a span.
template <class F>
constexpr int kPairsAtOnce = F::kSteps <= 4 ? 2 : 1;

#endif

// Elements of a group converted at once: their codes (16 KiB) stay in L1 while every token passes
// over them (read from L2 token after token, the codes of a whole group made prefill 20% slower).
constexpr int64_t kConvertedElems = 512;

// The tokens prepared at once take this much at most: every packed group passes over all of them
// (and over their interleaved pairs in the 512-bit path), so they stay in L2 (a 4 MiB strip, read
// from L3 group after group, made 512-token prefill 35% slower on a 2 MiB-L2 Xeon).
constexpr size_t kPreparedBytes = 1 << 20;

// Up to this many tokens run in registers; more convert each group's codes once for all of them
// (run_converted). AVX2: run_tokens two at a time, then a last one alone (on its 16 registers a third
// token's accumulators spill: three and four at once measured no faster than pairs). AVX-512:
// run_tokens_paired kPairedTokens at a time, which beats the converted token pairs up to about 16
// tokens (1B shape, Q4_0, on a Xeon: a 6-token step 91 against 111 ms, 8 tokens 110 against 131 ms,
// 16 tokens even).
#if defined(__AVX512F__)
constexpr int64_t kRegisterTokens = 8;
#else
constexpr int64_t kRegisterTokens = 4;
#endif

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
  static constexpr std::align_val_t kAlign{64};
  void release() {
    if (data_ != nullptr) ::operator delete(data_, kAlign);
    data_ = nullptr;
    capacity_ = 0;
  }
  float* data_ = nullptr;
  size_t capacity_ = 0;
};

thread_local Scratch prepared_scratch, codes_scratch, pairs_scratch;

// run(std::integral_constant<int, count>{}) for a count of 1..kMax known only at run time.
template <int kMax, class Run>
void with_token_count(int count, Run&& run) {
  if constexpr (kMax > 1) {
    if (count == kMax) return run(std::integral_constant<int, kMax>{});
    return with_token_count<kMax - 1>(count, run);
  } else {
    run(std::integral_constant<int, 1>{});
  }
}

// Packed group g of a matrix whose groups lie group_stride bytes apart.
template <class F>
const typename F::Packed* packed_group(const void* w, size_t group_stride, int64_t g) {
  return reinterpret_cast<const typename F::Packed*>(static_cast<const uint8_t*>(w) + g * group_stride);
}

// Floats of one token's activations as prepare lays them out (plain_layout): its steps, then its sums.
template <class F>
constexpr int64_t prepared_floats(int64_t n) {
  return F::kPrepared ? n + n / kSpanElems<F> * F::kMins : n;
}

// Tokens as run_tokens and run_converted read them: at `at`, `stride` floats apart.
struct PlainTokens {
  const float* at;
  int64_t stride;
};

// count tokens of x (x_stride floats apart) prepared into the thread's scratch, or, for a format read
// as it comes (Q8_0), x itself.
template <class F>
PlainTokens plain_tokens(const float* x, int64_t x_stride, int64_t count, int64_t n) {
  if constexpr (F::kPrepared) {
    const int64_t per_token = prepared_floats<F>(n);
    float* prepared = prepared_scratch.get(static_cast<size_t>(count * per_token));
    for (int64_t t = 0; t < count; ++t) prepare<F>(x + t * x_stride, n, prepared + t * per_token, plain_layout(n));
    return {prepared, per_token};
  } else {
    return {x, x_stride};
  }
}

// The packed groups' outputs for n_tok <= kRegisterTokens tokens of n columns as they come (x, x_stride
// floats apart): prepared, then each group's codes converted in registers, several tokens at a time.
template <class F>
void run_in_registers(const void* w, size_t group_stride, int64_t n_groups, const float* x, int64_t x_stride,
                      int64_t n_tok, int64_t n, float* out, int64_t out_stride) {
  const int64_t n_spans = n / kSpanElems<F>;
  const auto [xs, xs_stride] = plain_tokens<F>(x, x_stride, n_tok, n);
  const auto xsum_of = [&](int64_t t) { return F::kMins > 0 ? xs + t * xs_stride + n : nullptr; };
#if defined(__AVX512F__)
  // on 512-bit vectors, kPairedTokens at a time, from activations in pair_order
  float* paired = pairs_scratch.get(static_cast<size_t>(n_tok * n));
  for (int64_t t = 0; t < n_tok; ++t) pair_order(xs + t * xs_stride, n, paired + t * n);
  const float* x_at = paired;
  const int64_t x_at_stride = n;
  constexpr int kAtOnce = kPairedTokens;
#else
  // two at a time, and a last one alone
  const float* x_at = xs;
  const int64_t x_at_stride = xs_stride;
  constexpr int kAtOnce = 2;
#endif
  const auto run = [&]<int T>(std::integral_constant<int, T>, int64_t g, int64_t t) {
    const float* xt[T];
    const float* sums[T];
    float* o[T];
    for (int i = 0; i < T; ++i) {
      xt[i] = x_at + (t + i) * x_at_stride;
      sums[i] = xsum_of(t + i);
      o[i] = out + (t + i) * out_stride + g * kPackedRows;
    }
#if defined(__AVX512F__)
    run_tokens_paired<F, T>(packed_group<F>(w, group_stride, g), n_spans, xt, sums, o);
#else
    run_tokens<F, T>(packed_group<F>(w, group_stride, g), n_spans, xt, sums, o);
#endif
  };
  for (int64_t g = 0; g < n_groups; ++g) {
    for (int64_t t = 0; t < n_tok;) {
      const int left = static_cast<int>(n_tok - t < kAtOnce ? n_tok - t : kAtOnce);
      with_token_count<kAtOnce>(left, [&](auto count) { run(count, g, t); });
      t += left;
    }
  }
}

// The packed groups' outputs for more tokens (x, x_stride floats apart, as they come): each chunk of a
// group's spans converted once (convert_group), then every token over it. The AVX-512 build prepares
// the tokens straight into pairs (pair_up) and runs them on 512-bit vectors, a last odd one alone.
template <class F>
void run_over_converted(const void* w, size_t group_stride, int64_t n_groups, const float* x, int64_t x_stride,
                        int64_t n_tok, int64_t n, float* out, int64_t out_stride) {
  const int64_t n_spans = n / kSpanElems<F>;
#if defined(__AVX512F__)
  const int64_t n_pairs = n_tok / 2;
  const int64_t per_pair = pair_floats<F>(n);
  float* pairs = pairs_scratch.get(static_cast<size_t>(n_pairs * per_pair));
  for (int64_t q = 0; q < n_pairs; ++q) {
    pair_up<F>(x + 2 * q * x_stride, x + (2 * q + 1) * x_stride, n, pairs + q * per_pair);
  }
#else
  const int64_t n_pairs = 0;
#endif
  // the tokens that run alone, as run_converted reads them
  const int64_t first_alone = 2 * n_pairs, n_alone = n_tok - first_alone;
  const auto [alone, alone_stride] = plain_tokens<F>(x + first_alone * x_stride, x_stride, n_alone, n);
  constexpr int64_t kChunk = kConvertedElems / kSpanElems<F>;  // spans converted at once
  static_assert(kChunk % F::kSpans == 0, "a chunk holds whole packed blocks");
  float* converted = codes_scratch.get(static_cast<size_t>(kChunk * kConvertedFloats<F> + n_tok * kAccFloats));
  float* acc = converted + kChunk * kConvertedFloats<F>;
  for (int64_t g = 0; g < n_groups; ++g) {
    const auto out_of = [&](int64_t t) { return out + t * out_stride + g * kPackedRows; };
    // a chunk of spans converted, then every token over it, its accumulators carried to the next and
    // its outputs written after the last
    for (int64_t s0 = 0; s0 < n_spans; s0 += kChunk) {
      const int64_t ns = n_spans - s0 < kChunk ? n_spans - s0 : kChunk;
      const ChunkEnds ends{s0 == 0, s0 + ns == n_spans};
      convert_group<F>(packed_group<F>(w, group_stride, g), s0, ns, converted);
#if defined(__AVX512F__)
      const auto run = [&]<int P>(std::integral_constant<int, P>, int64_t q0) {
        const float* xp[P];
        const float* xsum[P];
        float* pair_acc[P];
        float* pair_out[P][2];
        for (int q = 0; q < P; ++q) {
          const float* pair = pairs + (q0 + q) * per_pair;
          xp[q] = pair + s0 * 2 * kSpanElems<F>;
          xsum[q] = F::kMins > 0 ? pair + 2 * n + s0 * F::kMins * kPairLanes : nullptr;
          pair_acc[q] = acc + 2 * (q0 + q) * kAccFloats;
          pair_out[q][0] = out_of(2 * (q0 + q));
          pair_out[q][1] = out_of(2 * (q0 + q) + 1);
        }
        run_converted_pairs<F, P>(converted, ns, xp, xsum, pair_acc, ends, pair_out);
      };
      int64_t q = 0;
      for (; q + kPairsAtOnce<F> <= n_pairs; q += kPairsAtOnce<F>) run(std::integral_constant<int, kPairsAtOnce<F>>{}, q);
      for (; q < n_pairs; ++q) run(std::integral_constant<int, 1>{}, q);
#endif
      for (int64_t t = 0; t < n_alone; ++t) {
        const float* xt = alone + t * alone_stride;
        const float* xsum = F::kMins > 0 ? xt + n + s0 * F::kMins : nullptr;
        run_converted<F>(converted, ns, xt + s0 * kSpanElems<F>, xsum, acc + (first_alone + t) * kAccFloats, ends,
                         out_of(first_alone + t));
      }
    }
  }
}

// Floats one token takes while its strip runs: prepared (or, in the AVX-512 build, in its pair).
template <class F>
constexpr int64_t strip_floats(int64_t n) {
#if defined(__AVX512F__)
  return pair_floats<F>(n) / 2;
#else
  return prepared_floats<F>(n);
#endif
}

// PackedGemmFn. The tokens go in strips of about as many as kPreparedBytes holds, all of one size
// within a unit (a lone strip of a few tokens left over would run the register path, slower per
// token than the converted one). The unit is a token pair in the AVX-512 build, so that only the last
// strip may leave a token out of the pairs.
template <class F>
void gemm_packed(const void* w, size_t group_stride, int64_t n_groups, const void* a, size_t a_stride, int64_t n_tok,
                 int64_t n, float* out, int64_t out_stride) {
  const auto* x = static_cast<const float*>(a);
  const int64_t x_stride = static_cast<int64_t>(a_stride / sizeof(float));
  if (n_tok <= kRegisterTokens) {
    run_in_registers<F>(w, group_stride, n_groups, x, x_stride, n_tok, n, out, out_stride);
    return;
  }
#if defined(__AVX512F__)
  constexpr int64_t kUnit = 2;
#else
  constexpr int64_t kUnit = 1;
#endif
  const int64_t fit = static_cast<int64_t>(kPreparedBytes / (sizeof(float) * strip_floats<F>(n))) / kUnit;
  const int64_t units = n_tok / kUnit, per_strip = fit < 1 ? 1 : fit;
  const int64_t n_strips = (units + per_strip - 1) / per_strip;
  // strip i starts at unit i units / n_strips; the last one also takes an odd token
  const auto strip_start = [&](int64_t i) { return i == n_strips ? n_tok : kUnit * (i * units / n_strips); };
  for (int64_t i = 0; i < n_strips; ++i) {
    const int64_t t0 = strip_start(i), nt = strip_start(i + 1) - t0;
    const float* xt = x + t0 * x_stride;
    float* strip_out = out + t0 * out_stride;
    if (nt <= kRegisterTokens) {
      run_in_registers<F>(w, group_stride, n_groups, xt, x_stride, nt, n, strip_out, out_stride);
    } else {
      run_over_converted<F>(w, group_stride, n_groups, xt, x_stride, nt, n, strip_out, out_stride);
    }
  }
}

template <class F, DType kType, const char* kName>
constexpr DotKernel kernel{DType::F32,
                           nullptr,
                           dot_packing_on_the_fly<gemm_packed<F>, kType>,
                           gemm_packing_on_the_fly<gemm_packed<F>, kType>,
                           kName,
                           gemm_packed<F>,
                           F::kPrepared};

// The kernel of this weight type, named kName (the instruction set it was compiled for), or nullptr.
template <const char* kName>
const DotKernel* rows8_f32act_kernel(DType weight_type) {
  switch (weight_type) {
    case DType::Q4_0: return &kernel<Nibbles<PackedQ4_0x8>, DType::Q4_0, kName>;
    case DType::Q4_1: return &kernel<Nibbles<PackedQ4_1x8>, DType::Q4_1, kName>;
    case DType::Q8_0: return &kernel<Bytes, DType::Q8_0, kName>;
    case DType::Q5_0: return &kernel<FifthBits<Nibbles<PackedQ5_0x8, 16>>, DType::Q5_0, kName>;
    case DType::Q5_1: return &kernel<FifthBits<Nibbles<PackedQ5_1x8>>, DType::Q5_1, kName>;
    case DType::Q4_K: return &kernel<KNibbles<PackedQ4_Kx8>, DType::Q4_K, kName>;
    case DType::Q5_K: return &kernel<FifthBits<KNibbles<PackedQ5_Kx8>>, DType::Q5_K, kName>;
    case DType::Q6_K: return &kernel<SixBits, DType::Q6_K, kName>;
    default: return nullptr;
  }
}

}  // namespace
}  // namespace inferscope::cpu
