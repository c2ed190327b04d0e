// AVX2 kernels of Q4_0 and Q4_1 weights with f32 activations ("weight-only quantization") over rows
// packed eight at a time (packed_rows.h). A 4-bit code meets its activation as an exact product and
// the block's scale comes in once per block (Q4_1's min once per block too, against the block's
// activation sum), instead of every weight being dequantized first. Per output (row, token) the
// operations are fixed:
//   a_e = 0, mins = 0                                                               e = 0..7
//   for each block b:  p_e = code(0, e) x(0, e);  for pieces c = 1..3: p_e = fma(code(c, e), x(c, e), p_e)
//                      a_e = fma(d_b, p_e, a_e);  mins = fma(m_b, xsum_b, mins)  (Q4_0: m = -8 d)
//   output = (((a_0 + a_1) + (a_2 + a_3)) + ((a_4 + a_5) + (a_6 + a_7))) + mins
// code(c, e) is element e of code piece c (the code bytes 4c..4c+3; e < 4: the low nibble of byte e,
// element 4c + e; else the high nibble of byte e - 4, element 4c + 12 + e), x(c, e) its activation and
// xsum_b the block's activation sum in a fixed order. A code is taken in place (masked, not shifted:
// the code times 2^k) and its activation comes scaled by 2^-k, so every product is code x activation
// exactly (unless |x| < 2^-102, where x 2^-k leaves f32's normal range; the kernels agree even then).
// One token keeps row i in lane i (the codes of eight rows against one activation); several tokens
// keep code e in lane e (one row's piece against eight activations), with every row's codes converted
// once for all of them. Each lane runs the same operations either way, so no output depends on the
// token count or the tile.
#include <cstring>
#include <new>

#include "kernels/cpu/avx2_common.h"
#include "kernels/cpu/packed_rows.h"
#include "kernels/cpu/packed_rows_driver.h"

namespace inferscope::cpu {
namespace {

constexpr int kBlock = 32;
constexpr int kPieces = 4;      // 4-byte code pieces per row and block
constexpr int kPieceCodes = 8;  // codes per piece

// Code e of a piece: its bit in the 32-bit piece; the top nibble is shifted down to bit 0 first (in
// place it would be negative as an int32), so it is taken as itself and the rest as code x 2^bit.
constexpr int code_bit(int e) { return e < 4 ? 8 * e : 8 * (e - 4) + 4; }
constexpr int kTopCode = 7;
constexpr int code_shift(int e) { return e == kTopCode ? code_bit(e) : 0; }
constexpr int code_power(int e) { return code_bit(e) - code_shift(e); }

// Per lane e: the shift and mask that take code e out of a piece, and 2^-code_power(e), the scale of
// its activation.
struct CodeLanes {
  alignas(32) int32_t shift[kPieceCodes];
  alignas(32) int32_t mask[kPieceCodes];
  alignas(32) float scale[kPieceCodes];
};
constexpr CodeLanes code_lanes() {
  CodeLanes lanes{};
  for (int e = 0; e < kPieceCodes; ++e) {
    lanes.shift[e] = code_shift(e);
    lanes.mask[e] = 0xF << code_power(e);
    lanes.scale[e] = 1.0f / static_cast<float>(1 << code_power(e));  // exact: a power of two
  }
  return lanes;
}
constexpr CodeLanes kCodeLanes = code_lanes();

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

// One token's activations as the kernels read them: xs[32 b + 8 c + e] = x(c, e) of block b times
// 2^-code_power(e) (exact), then xsum[b] = (x0..7 + x8..15) + (x16..23 + x24..31), then hsum, for
// every block.
void prepare(const float* x, int64_t nb, float* xs) {
  const __m256 scale = _mm256_load_ps(kCodeLanes.scale);
  float* xsum = xs + nb * kBlock;
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = x + b * kBlock;
    // elements 4c..4c+3 (the low nibbles) and 4c+16..4c+19 (the high ones)
    for (int c = 0; c < kPieces; ++c) {
      const __m256 v = _mm256_set_m128(_mm_loadu_ps(xb + 16 + 4 * c), _mm_loadu_ps(xb + 4 * c));
      _mm256_storeu_ps(xs + b * kBlock + kPieceCodes * c, _mm256_mul_ps(v, scale));
    }
    const __m256 lo = _mm256_add_ps(_mm256_loadu_ps(xb), _mm256_loadu_ps(xb + 8));
    const __m256 hi = _mm256_add_ps(_mm256_loadu_ps(xb + 16), _mm256_loadu_ps(xb + 24));
    xsum[b] = hsum(_mm256_add_ps(lo, hi));
  }
}

template <class Packed>
constexpr bool kHasMin = requires(const Packed& p) { p.m; };

// The block's m of the eight rows (Q4_0: -8 d, exact).
template <class Packed>
__attribute__((always_inline)) inline __m256 block_mins(const Packed& wb, __m256 d) {
  if constexpr (kHasMin<Packed>) return halves8(wb.m);
  return _mm256_mul_ps(d, _mm256_set1_ps(-8.0f));
}

// ((v_0 + v_1) + (v_2 + v_3)) + ((v_4 + v_5) + (v_6 + v_7)), lane by lane.
__attribute__((always_inline)) inline __m256 tree8(const __m256 (&v)[kPieceCodes]) {
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

// One token, row i in lane i: xs is the token's prepared activations.
template <class Packed>
void run_one(const Packed* w, int64_t nb, const float* xs, float* out) {
  const __m256 zero = _mm256_setzero_ps();
  __m256 a[kPieceCodes] = {zero, zero, zero, zero, zero, zero, zero, zero}, mins = zero;
  for (int64_t b = 0; b < nb; ++b) {
    const Packed& wb = w[b];
    prefetch_ahead(wb);
    const float* xb = xs + b * kBlock;
    __m256 p[kPieceCodes];
#pragma GCC unroll 4
    for (int c = 0; c < kPieces; ++c) {
      const __m256i piece = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wb.qs + 32 * c));
#pragma GCC unroll 8
      for (int e = 0; e < kPieceCodes; ++e) {
        // code e of the eight rows' pieces: in place, or (the top nibble) shifted down
        const __m256i q = e == kTopCode ? _mm256_srli_epi32(piece, code_shift(e))
                                        : _mm256_and_si256(piece, _mm256_set1_epi32(kCodeLanes.mask[e]));
        const __m256 code = _mm256_cvtepi32_ps(q), x = _mm256_broadcast_ss(xb + kPieceCodes * c + e);
        p[e] = c == 0 ? _mm256_mul_ps(code, x) : _mm256_fmadd_ps(code, x, p[e]);
      }
    }
    const __m256 d = halves8(wb.d);
#pragma GCC unroll 8
    for (int e = 0; e < kPieceCodes; ++e) a[e] = _mm256_fmadd_ps(d, p[e], a[e]);
    mins = _mm256_fmadd_ps(block_mins(wb, d), _mm256_broadcast_ss(xs + nb * kBlock + b), mins);
  }
  _mm256_storeu_ps(out, _mm256_add_ps(tree8(a), mins));
}

// A group's codes and scales converted for the several-token path: per block, row i's piece c (code
// e in lane e) at codes[(32 b + 4 i + c) * 8], row i's d at scales[8 (2 b) + i], the rows' m at
// scales[8 (2 b + 1)].
template <class Packed>
void convert_group(const Packed* w, int64_t nb, float* codes, float* scales) {
  const __m256i shifts = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCodeLanes.shift));
  const __m256i masks = _mm256_load_si256(reinterpret_cast<const __m256i*>(kCodeLanes.mask));
  for (int64_t b = 0; b < nb; ++b) {
    const Packed& wb = w[b];
    for (int i = 0; i < kPackedRows; ++i)
      for (int c = 0; c < kPieces; ++c) {
        int32_t piece;
        std::memcpy(&piece, wb.qs + 32 * c + 4 * i, sizeof piece);
        const __m256i q = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(piece), shifts), masks);
        _mm256_store_ps(codes + (b * kBlock + kPieces * i + c) * kPieceCodes, _mm256_cvtepi32_ps(q));
      }
    const __m256 d = halves8(wb.d);
    _mm256_store_ps(scales + 2 * b * kPackedRows, d);
    _mm256_store_ps(scales + (2 * b + 1) * kPackedRows, block_mins(wb, d));
  }
}

// Several tokens, code e in lane e: one token of a converted group (convert_group).
void run_converted(const float* codes, const float* scales, int64_t nb, const float* xs, float* out) {
  const __m256 zero = _mm256_setzero_ps();
  __m256 a[kPackedRows] = {zero, zero, zero, zero, zero, zero, zero, zero}, mins = zero;
  for (int64_t b = 0; b < nb; ++b) {
    const float* xb = xs + b * kBlock;
    __m256 x[kPieces];
#pragma GCC unroll 4
    for (int c = 0; c < kPieces; ++c) x[c] = _mm256_loadu_ps(xb + kPieceCodes * c);
    const float* cb = codes + b * kBlock * kPieceCodes;
#pragma GCC unroll 8
    for (int i = 0; i < kPackedRows; ++i) {
      const float* ci = cb + kPieces * i * kPieceCodes;
      __m256 p = _mm256_mul_ps(_mm256_load_ps(ci), x[0]);
#pragma GCC unroll 4
      for (int c = 1; c < kPieces; ++c) p = _mm256_fmadd_ps(_mm256_load_ps(ci + c * kPieceCodes), x[c], p);
      a[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(scales + 2 * b * kPackedRows + i), p, a[i]);
    }
    mins = _mm256_fmadd_ps(_mm256_load_ps(scales + (2 * b + 1) * kPackedRows), _mm256_broadcast_ss(xs + nb * kBlock + b),
                           mins);
  }
  _mm256_storeu_ps(out, _mm256_add_ps(lane_tree8(a), mins));
}

thread_local Scratch prepared_scratch, codes_scratch;

// Packed groups x n_tok tokens, in strips of as many tokens as kPreparedBytes holds (all of them but
// for very long batches of very wide rows), each strip's activations prepared once: one token runs
// each group in registers, several run each group's converted codes token after token.
template <class Packed>
void gemm_packed(const void* w, size_t group_stride, int64_t n_groups, const void* a, size_t a_stride, int64_t n_tok,
                 int64_t n, float* out, int64_t out_stride) {
  const int64_t nb = n / kBlock;
  const auto* x = static_cast<const float*>(a);
  const int64_t x_stride = static_cast<int64_t>(a_stride / sizeof(float));
  const int64_t per_token = n + nb;  // prepared floats: xs, then xsum
  const int64_t fit = static_cast<int64_t>(kPreparedBytes / (sizeof(float) * per_token));
  const int64_t strip = fit < 1 ? 1 : fit < n_tok ? fit : n_tok;
  float* prepared = prepared_scratch.get(static_cast<size_t>(strip * per_token));
  const auto group = [&](int64_t g) {
    return reinterpret_cast<const Packed*>(static_cast<const uint8_t*>(w) + g * group_stride);
  };
  float* codes = nullptr;
  float* scales = nullptr;
  if (n_tok > 1) {
    codes = codes_scratch.get(static_cast<size_t>(nb * (kBlock * kPieceCodes + 2 * kPackedRows)));
    scales = codes + nb * kBlock * kPieceCodes;
  }
  for (int64_t t0 = 0; t0 < n_tok; t0 += strip) {
    const int64_t nt = n_tok - t0 < strip ? n_tok - t0 : strip;
    for (int64_t t = 0; t < nt; ++t) prepare(x + (t0 + t) * x_stride, nb, prepared + t * per_token);
    for (int64_t g = 0; g < n_groups; ++g) {
      float* og = out + t0 * out_stride + g * kPackedRows;
      if (n_tok == 1) {
        run_one(group(g), nb, prepared, og);
        continue;
      }
      convert_group(group(g), nb, codes, scales);
      for (int64_t t = 0; t < nt; ++t) run_converted(codes, scales, nb, prepared + t * per_token, og + t * out_stride);
    }
  }
}

template <class Packed, DType kType>
constexpr DotKernel kernel{DType::F32,
                           nullptr,
                           dot_packing_on_the_fly<gemm_packed<Packed>, kType>,
                           gemm_packing_on_the_fly<gemm_packed<Packed>, kType>,
                           "avx2",
                           gemm_packed<Packed>,
                           true};

}  // namespace

const DotKernel* avx2_rows8_f32act_kernel(DType weight_type) {
  switch (weight_type) {
    case DType::Q4_0: return &kernel<PackedQ4_0x8, DType::Q4_0>;
    case DType::Q4_1: return &kernel<PackedQ4_1x8, DType::Q4_1>;
    default: return nullptr;
  }
}

}  // namespace inferscope::cpu
