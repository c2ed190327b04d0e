// Internal to the packed-row kernels (gemm_rows8_q8act_avx2.cpp, gemm_rows8_f32act_avx2.cpp): rows in the
// file's layout go through the packed kernel, each run of up to eight rows packed on the fly, so that
// every output is the packed kernel's own bits whether or not the matrix came packed; the single dot
// is one row padded to eight with zero rows. Static templates: each file instantiates its own.
#pragma once
#include <cstring>

#include "kernels/cpu/matmul/packed_rows.h"
#include "kernels/cpu/matmul/vec_dot.h"

namespace inferscope::cpu {

// GemmFn over rows in the file's layout, through kPacked (a PackedGemmFn of type kType).
template <PackedGemmFn kPacked, DType kType>
static void gemm_packing_on_the_fly(const void* w, size_t w_stride, int64_t n_rows, const void* a, size_t a_stride,
                                    int64_t n_tok, int64_t n, float* out, int64_t out_stride) {
  constexpr int64_t kStripTokens = 4;
  const size_t group_bytes = packed_group_bytes(kType, n);
  auto* group = static_cast<uint8_t*>(__builtin_alloca(group_bytes));
  float strip[kStripTokens * kPackedRows];
  const auto* ab = static_cast<const uint8_t*>(a);
  for (int64_t r0 = 0; r0 < n_rows; r0 += kPackedRows) {
    const int64_t nr = n_rows - r0 < kPackedRows ? n_rows - r0 : kPackedRows;
    const MatrixRef rows{kType, static_cast<const uint8_t*>(w) + r0 * w_stride, nr, n, w_stride};
    pack_row_group(rows, 0, nr, group);
    if (nr == kPackedRows) {
      kPacked(group, group_bytes, 1, a, a_stride, n_tok, n, out + r0, out_stride);
      continue;
    }
    // a short group: through a strip buffer, keeping only the real rows
    for (int64_t t0 = 0; t0 < n_tok; t0 += kStripTokens) {
      const int64_t nt = n_tok - t0 < kStripTokens ? n_tok - t0 : kStripTokens;
      kPacked(group, group_bytes, 1, ab + t0 * a_stride, a_stride, nt, n, strip, kPackedRows);
      for (int64_t t = 0; t < nt; ++t)
        std::memcpy(out + (t0 + t) * out_stride + r0, strip + t * kPackedRows, sizeof(float) * nr);
    }
  }
}

// VecDotFn: one row, packed as a group of one.
template <PackedGemmFn kPacked, DType kType>
static float dot_packing_on_the_fly(const void* w, const void* a, int64_t n) {
  float out;
  gemm_packing_on_the_fly<kPacked, kType>(w, 0, 1, a, 0, 1, n, &out, 0);
  return out;
}

}  // namespace inferscope::cpu
