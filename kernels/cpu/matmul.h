// Matrix x activations for every weight type: Y[t][r] = sum_c W[r][c] * X[t][c].
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/dtype.h"

namespace inferscope {

class ThreadPool;

// A weight matrix in its stored format: `rows` rows of `cols` elements, row r at data + r * row_stride.
struct MatrixRef {
  DType type = DType::F32;
  const void* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_stride = 0;  // bytes; row_bytes(type, cols) for a dense matrix
};

// X: n_tok rows of `w.cols` floats; Y: n_tok rows of `w.rows` floats.
// Batch invariance: Y[t][r] is bit-identical whatever n_tok, the other rows of X, and the thread
// count are (each output is one dot product with a fixed reduction order).
void matmul(const MatrixRef& w, const float* x, int64_t n_tok, float* y, ThreadPool& pool);

// Which kernel family runs: Auto = AVX2 when use_avx2(), else scalar. Throws std::invalid_argument
// for a weight type the family cannot multiply (and Avx2 on a CPU without AVX2/FMA/F16C).
enum class KernelChoice { Auto, Scalar, Avx2 };
void matmul(const MatrixRef& w, const float* x, int64_t n_tok, float* y, ThreadPool& pool, KernelChoice choice);

// The plain reference: dequantize each row, dot in double. Slow, obviously right.
void matmul_reference(const MatrixRef& w, const float* x, int64_t n_tok, float* y);

// Which kernel matmul() uses for this type on this CPU ("avx2", "scalar"; "none" if unsupported).
const char* matmul_kernel_name(DType type);

}  // namespace inferscope
