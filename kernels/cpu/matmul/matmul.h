// Matrix x activations for every weight type: Y[t][r] = sum_c W[r][c] * X[t][c].
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/format/dtype.h"
#include "kernels/cpu/large_pages.h"

namespace inferscope {

class ThreadPool;

// A weight matrix in its stored format: `rows` rows of `cols` elements, row r at data + r * row_stride.
struct MatrixRef {
  DType type = DType::F32;
  const void* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_stride = 0;  // bytes; row_bytes(type, cols) for a dense matrix
  // Optional: the first rows / 8 * 8 rows again, packed eight at a time (pack_rows_for) for the
  // kernels that multiply packed rows faster. Every output is the same with or without.
  const void* packed = nullptr;
};

// How activations meet quantized weights. F32: the activations stay f32 and meet the weights exactly
// ("weight-only quantization"): each weight block is dequantized on the fly (every dequantized value
// is representable in f32), or, for Q4_0/Q4_1/Q8_0/Q4_K/Q6_K, its codes multiply the activations
// exactly and each scale and min apply once per run of codes they cover; either way the result
// differs from a dequantize-then-dot reference only by f32 rounding. Q8: the activations are rounded to 8-bit
// blocks (Q8_0/Q8_1/Q8_K) and multiplied in integers, as llama.cpp does: faster, but the rounding can
// change greedy output. F32/F16/BF16 weights use f32 activations under both.
enum class ActivationPrecision { F32, Q8 };

// Which kernel family runs: Auto = AVX-512 when use_avx512vl(), else AVX2 when use_avx2(), else
// scalar. Avx512 is the AVX2 family with its AVX-512VL builds (the packed-row kernels), same bits.
enum class KernelChoice { Auto, Scalar, Avx2, Avx512 };

struct MatmulOptions {
  ActivationPrecision activations = ActivationPrecision::F32;
  KernelChoice kernels = KernelChoice::Auto;
  // Operator fusion: matmul_fused runs its products in one pool dispatch. false: one matmul (one
  // dispatch and join) per product; every output is the same dot product either way.
  bool fuse = true;
};

// X: n_tok rows of `w.cols` floats; Y: n_tok rows of `w.rows` floats.
// Batch invariance: Y[t][r] is bit-identical whatever n_tok, the other rows of X, and the thread
// count are (each output is one dot product with a fixed reduction order).
// Throws std::invalid_argument for a weight type the family cannot multiply, for partial blocks, and
// for KernelChoice::Avx2 on a CPU without AVX2/FMA/F16C (Avx512: without AVX-512F/VL too).
void matmul(const MatrixRef& w, const float* x, int64_t n_tok, float* y, ThreadPool& pool,
            const MatmulOptions& options = {});

// One product of a fused matmul: Y (n_tok rows of `w.rows` floats) = W x X.
struct MatmulTarget {
  MatrixRef w;
  float* y = nullptr;
};

// Several matrices over the same activations (Q, K, V; gate, up) as one parallel job: one activation
// preparation per kernel format and one fork/join instead of one each. The targets must
// have the same w.cols (else std::invalid_argument); every output is bit-identical to
// matmul(target.w, x, n_tok, target.y), and so as batch invariant.
void matmul_fused(std::span<const MatmulTarget> targets, const float* x, int64_t n_tok, ThreadPool& pool,
                  const MatmulOptions& options = {});

// Whether the kernel matmul() picks for w.type under `options` multiplies packed rows
// (packed_rows.h; point w.packed at them), and those rows.
bool uses_packed_rows(const MatrixRef& w, const MatmulOptions& options = {});
// Empty when the kernel does not use packed rows (then w.packed stays null).
LargePageBytes pack_rows_for(const MatrixRef& w, const MatmulOptions& options = {});

// The plain reference: dequantize each row, dot in double. Slow, obviously right.
void matmul_reference(const MatrixRef& w, const float* x, int64_t n_tok, float* y);

// The kernel matmul() uses for this type and precision on this CPU, by the family `kernels` picks:
// "avx512vnni", "avx512vl", "avx2", "scalar", or "none" (unsupported, or the family unavailable here).
const char* matmul_kernel_name(DType type, ActivationPrecision activations = ActivationPrecision::F32,
                               KernelChoice kernels = KernelChoice::Auto);

}  // namespace inferscope
