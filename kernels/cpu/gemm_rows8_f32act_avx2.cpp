// AVX2 kernels of Q4_0, Q4_1 and Q8_0 weights with f32 activations ("weight-only quantization") over
// rows packed eight at a time (packed_rows.h). A code meets its activation as an exact product and
// the block's scale comes in once per block (Q4_1's min once per block too, against the block's
// activation sum), instead of every weight being dequantized first. A block's 32 codes per row are
// read in four steps of eight, code(c, e) (step c = 0..3, e = 0..7) against its activation x(c, e);
// per output (row, token) the operations are fixed:
//   a_e = 0, mins = 0                                                               e = 0..7
//   for each block b:  p_e = code(0, e) x(0, e);  for steps c = 1..3: p_e = fma(code(c, e), x(c, e), p_e)
//                      a_e = fma(d_b, p_e, a_e);  mins = fma(m_b, xsum_b, mins)
//   output = (((a_0 + a_1) + (a_2 + a_3)) + ((a_4 + a_5) + (a_6 + a_7))) + mins
// Codes are taken where they lie in the packed bytes, as code x 2^k, exactly:
// - Q4_0, Q4_1: step c is code piece c (the code bytes 4c..4c+3); e < 4: the low nibble of byte e,
//   element 4c + e; else the high nibble of byte e - 4, element 4c + 12 + e. A nibble is masked in
//   place and its activation comes scaled by 2^-k ("prepared": reordered, scaled, with the block's
//   sum xsum_b in a fixed order); Q4_0 has no m: it is -8 d (exact).
// - Q8_0: step c is pieces 2c and 2c + 1, code e element 8c + e; a signed byte is moved to the top
//   of its 32-bit lane (code x 2^24), the activations are used as they are and d comes as d 2^-24, so
//   p_e is 2^24 times the products' sum, rounded the same way. No mins.
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

constexpr int kBlock = 32;
constexpr int kSteps = 4;      // steps of eight codes per row and block
constexpr int kStepCodes = 8;  // codes per step

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

// Q4_0, Q4_1: a step is one code piece, eight nibbles of each row; the activations are prepared.
template <class P>
struct Nibbles {
  using Packed = P;
  static constexpr bool kPrepared = true;
  static constexpr bool kHasMins = true;
  // code e of step c of the eight rows, row i in lane i: in place, or (the top nibble) shifted down
  static __attribute__((always_inline)) void row_codes(const P& wb, int c, __m256i (&q)[kStepCodes]) {
    const __m256i piece = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb.qs + 32 * c));
#pragma GCC unroll 8
    for (int e = 0; e < kStepCodes; ++e)
      q[e] = e == kTopCode ? _mm256_srli_epi32(piece, code_shift(e))
                           : _mm256_and_si256(piece, _mm256_set1_epi32(kCodeLanes.mask[e]));
  }
  // step c of row i, code e in lane e
  static __attribute__((always_inline)) __m256 lane_codes(const P& wb, int i, int c) {
    int32_t piece;
    std::memcpy(&piece, wb.qs + 32 * c + 4 * i, sizeof piece);
    const __m256i shifts = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCodeLanes.shift));
    const __m256i masks = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCodeLanes.mask));
    return _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(piece), shifts), masks));
  }
  static __attribute__((always_inline)) __m256 scales(const P& wb) { return halves8(wb.d); }
  // the block's m of the eight rows (Q4_0: -8 d, exact)
  static __attribute__((always_inline)) __m256 mins(const P& wb, __m256 d) {
    if constexpr (requires { wb.m; }) return halves8(wb.m);
    return _mm256_mul_ps(d, _mm256_set1_ps(-8.0f));
  }
};

// Q8_0: a step is two code pieces (elements 8c..8c+7), each code taken as code x 2^24, against the
// activations as they are and d 2^-24.
struct Bytes {
  using Packed = PackedQ8_0x8;
  static constexpr bool kPrepared = false;
  static constexpr bool kHasMins = false;
  // pshufb control for one 32-bit lane k (of four per 128 bits): its byte j to the top, zeros below
  // (a control byte with the top bit set gives a zero)
  static constexpr int32_t to_top(int j, int k) { return static_cast<int32_t>(0x808080u | (4u * k + j) << 24); }
  // code e of step c of the eight rows, row i in lane i: byte e % 4 of piece 2c + e / 4 moved to the
  // top of the lane
  static __attribute__((always_inline)) void row_codes(const Packed& wb, int c, __m256i (&q)[kStepCodes]) {
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
  static __attribute__((always_inline)) __m256 lane_codes(const Packed& wb, int i, int c) {
    int32_t lo, hi;
    std::memcpy(&lo, wb.qs + 32 * (2 * c) + 4 * i, sizeof lo);
    std::memcpy(&hi, wb.qs + 32 * (2 * c + 1) + 4 * i, sizeof hi);
    const __m256i q = _mm256_cvtepi8_epi32(_mm_setr_epi32(lo, hi, 0, 0));
    return _mm256_cvtepi32_ps(_mm256_slli_epi32(q, 24));
  }
  static __attribute__((always_inline)) __m256 scales(const Packed& wb) {
    return _mm256_mul_ps(halves8(wb.d), _mm256_set1_ps(1.0f / static_cast<float>(1 << 24)));  // exact
  }
};

// One token's activations as the Q4 kernels read them: xs[32 b + 8 c + e] = x(c, e) of block b times
// 2^-code_power(e) (exact), then xsum[b] = (x0..7 + x8..15) + (x16..23 + x24..31), then hsum, for
// every block.
void prepare(const float* x, int64_t nb, float* xs) {
  const __m256 scale = _mm256_load_ps(kCodeLanes.scale);
  float* xsum = xs + nb * kBlock;
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = x + b * kBlock;
    // elements 4c..4c+3 (the low nibbles) and 4c+16..4c+19 (the high ones)
    for (int c = 0; c < kSteps; ++c) {
      const __m256 v = _mm256_set_m128(_mm_loadu_ps(xb + 16 + 4 * c), _mm_loadu_ps(xb + 4 * c));
      _mm256_storeu_ps(xs + b * kBlock + kStepCodes * c, _mm256_mul_ps(v, scale));
    }
    const __m256 lo = _mm256_add_ps(_mm256_loadu_ps(xb), _mm256_loadu_ps(xb + 8));
    const __m256 hi = _mm256_add_ps(_mm256_loadu_ps(xb + 16), _mm256_loadu_ps(xb + 24));
    xsum[b] = hsum(_mm256_add_ps(lo, hi));
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

// One token, row i in lane i: xs is the token's activations (prepared, for the Q4 formats).
template <class F>
void run_one(const typename F::Packed* w, int64_t nb, const float* xs, float* out) {
  const __m256 zero = _mm256_setzero_ps();
  __m256 a[kStepCodes] = {zero, zero, zero, zero, zero, zero, zero, zero}, mins = zero;
  for (int64_t b = 0; b < nb; ++b) {
    const typename F::Packed& wb = w[b];
    prefetch_ahead(wb);
    const float* xb = xs + b * kBlock;
    __m256 p[kStepCodes];
#pragma GCC unroll 4
    for (int c = 0; c < kSteps; ++c) {
      __m256i q[kStepCodes];
      F::row_codes(wb, c, q);
#pragma GCC unroll 8
      for (int e = 0; e < kStepCodes; ++e) {
        const __m256 code = _mm256_cvtepi32_ps(q[e]), x = _mm256_broadcast_ss(xb + kStepCodes * c + e);
        p[e] = c == 0 ? _mm256_mul_ps(code, x) : _mm256_fmadd_ps(code, x, p[e]);
      }
    }
    const __m256 d = F::scales(wb);
#pragma GCC unroll 8
    for (int e = 0; e < kStepCodes; ++e) a[e] = _mm256_fmadd_ps(d, p[e], a[e]);
    if constexpr (F::kHasMins) mins = _mm256_fmadd_ps(F::mins(wb, d), _mm256_broadcast_ss(xs + nb * kBlock + b), mins);
  }
  _mm256_storeu_ps(out, _mm256_add_ps(tree8(a), mins));
}

// Scale vectors per block of a converted group: d, then (with mins) m.
template <class F>
constexpr int kScaleVectors = F::kHasMins ? 2 : 1;

// A group's codes and scales converted for the several-token path: per block, row i's step c (code
// e in lane e) at codes[(32 b + 4 i + c) * 8], row i's d at scales[8 kScaleVectors b + i], the rows'
// m at scales[8 (kScaleVectors b + 1)].
template <class F>
void convert_group(const typename F::Packed* w, int64_t nb, float* codes, float* scales) {
  for (int64_t b = 0; b < nb; ++b) {
    const typename F::Packed& wb = w[b];
    for (int i = 0; i < kPackedRows; ++i)
      for (int c = 0; c < kSteps; ++c)
        _mm256_store_ps(codes + (b * kBlock + kSteps * i + c) * kStepCodes, F::lane_codes(wb, i, c));
    float* sb = scales + kScaleVectors<F> * b * kPackedRows;
    const __m256 d = F::scales(wb);
    _mm256_store_ps(sb, d);
    if constexpr (F::kHasMins) _mm256_store_ps(sb + kPackedRows, F::mins(wb, d));
  }
}

// Several tokens, code e in lane e: one token over nb blocks of a converted group (convert_group),
// its activations at xs and (with mins) block sums at xsum, carrying its accumulators in acc (a_0..7,
// then mins, eight floats each).
template <class F>
void run_converted(const float* codes, const float* scales, int64_t nb, const float* xs, const float* xsum,
                   float* acc) {
  __m256 a[kPackedRows], mins = _mm256_load_ps(acc + kPackedRows * kPackedRows);
#pragma GCC unroll 8
  for (int i = 0; i < kPackedRows; ++i) a[i] = _mm256_load_ps(acc + i * kPackedRows);
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = xs + b * kBlock;
    __m256 x[kSteps];
#pragma GCC unroll 4
    for (int c = 0; c < kSteps; ++c) x[c] = _mm256_loadu_ps(xb + kStepCodes * c);
    const float* cb = codes + b * kBlock * kStepCodes;
    const float* sb = scales + kScaleVectors<F> * b * kPackedRows;
#pragma GCC unroll 8
    for (int i = 0; i < kPackedRows; ++i) {
      const float* ci = cb + kSteps * i * kStepCodes;
      __m256 p = _mm256_mul_ps(_mm256_load_ps(ci), x[0]);
#pragma GCC unroll 4
      for (int c = 1; c < kSteps; ++c) p = _mm256_fmadd_ps(_mm256_load_ps(ci + c * kStepCodes), x[c], p);
      a[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(sb + i), p, a[i]);
    }
    if constexpr (F::kHasMins)
      mins = _mm256_fmadd_ps(_mm256_load_ps(sb + kPackedRows), _mm256_broadcast_ss(xsum + b), mins);
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

// Blocks of a group converted at once: their codes (16 KiB) stay in L1 while every token passes over
// them (read from L2 token after token, the codes of a whole group made prefill 20% slower).
constexpr int64_t kConvertedBlocks = 16;

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

// Packed groups x n_tok tokens whose activations (as run_one reads them) are xs_stride floats apart:
// one token runs each group in registers, several run each group's converted codes token after token.
template <class F>
void run_groups(const void* w, size_t group_stride, int64_t n_groups, const float* xs, int64_t xs_stride,
                int64_t n_tok, int64_t nb, float* out, int64_t out_stride) {
  const auto group = [&](int64_t g) {
    return reinterpret_cast<const typename F::Packed*>(static_cast<const uint8_t*>(w) + g * group_stride);
  };
  if (n_tok == 1) {
    for (int64_t g = 0; g < n_groups; ++g) run_one<F>(group(g), nb, xs, out + g * kPackedRows);
    return;
  }
  constexpr int64_t kChunk = kConvertedBlocks;
  constexpr int64_t kChunkFloats = kChunk * (kBlock * kStepCodes + kScaleVectors<F> * kPackedRows);
  float* codes = codes_scratch.get(static_cast<size_t>(kChunkFloats + n_tok * kAccFloats));
  float* scales = codes + kChunk * kBlock * kStepCodes;
  float* acc = codes + kChunkFloats;
  for (int64_t g = 0; g < n_groups; ++g) {
    for (int64_t i = 0; i < n_tok * kAccFloats; ++i) acc[i] = 0.0f;
    // a chunk of blocks converted, then every token over it, its accumulators carried to the next
    for (int64_t b0 = 0; b0 < nb; b0 += kChunk) {
      const int64_t kb = nb - b0 < kChunk ? nb - b0 : kChunk;
      convert_group<F>(group(g) + b0, kb, codes, scales);
      for (int64_t t = 0; t < n_tok; ++t) {
        const float* xt = xs + t * xs_stride;
        const float* xsum = F::kHasMins ? xt + nb * kBlock + b0 : nullptr;
        run_converted<F>(codes, scales, kb, xt + b0 * kBlock, xsum, acc + t * kAccFloats);
      }
    }
    for (int64_t t = 0; t < n_tok; ++t) finish_converted(acc + t * kAccFloats, out + t * out_stride + g * kPackedRows);
  }
}

// PackedGemmFn. The Q4 formats prepare the tokens in strips of as many as kPreparedBytes holds (all of
// them but for very long batches of very wide rows); Q8_0 reads the activations as they are.
template <class F>
void gemm_packed(const void* w, size_t group_stride, int64_t n_groups, const void* a, size_t a_stride, int64_t n_tok,
                 int64_t n, float* out, int64_t out_stride) {
  const int64_t nb = n / kBlock;
  const auto* x = static_cast<const float*>(a);
  const int64_t x_stride = static_cast<int64_t>(a_stride / sizeof(float));
  if constexpr (!F::kPrepared) {
    run_groups<F>(w, group_stride, n_groups, x, x_stride, n_tok, nb, out, out_stride);
  } else {
    const int64_t per_token = n + nb;  // prepared floats: xs, then xsum
    const int64_t fit = static_cast<int64_t>(kPreparedBytes / (sizeof(float) * per_token));
    const int64_t strip = fit < 1 ? 1 : fit < n_tok ? fit : n_tok;
    float* prepared = prepared_scratch.get(static_cast<size_t>(strip * per_token));
    for (int64_t t0 = 0; t0 < n_tok; t0 += strip) {
      const int64_t nt = n_tok - t0 < strip ? n_tok - t0 : strip;
      for (int64_t t = 0; t < nt; ++t) prepare(x + (t0 + t) * x_stride, nb, prepared + t * per_token);
      run_groups<F>(w, group_stride, n_groups, prepared, per_token, nt, nb, out + t0 * out_stride, out_stride);
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
    default: return nullptr;
  }
}

}  // namespace inferscope::cpu
