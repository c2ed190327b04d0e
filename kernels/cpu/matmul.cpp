// matmul: quantize each activation row once to the kernel's activation type (unless it takes f32
// activations as they are), then split the output rows across threads; each output is one dot product of one weight row with one activation row.
#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/vec_dot.h"

namespace inferscope {
namespace {

// Output rows handed to one gemm call: its weight rows stay in L1 while all tokens stream past.
constexpr int64_t kRowBlock = 32;
// Activation rows per quantization chunk (quantizing a row costs about as much as one small dot).
constexpr int64_t kQuantizeGrain = 16;

const cpu::DotKernel* find_kernel(DType type, const MatmulOptions& options) {
  const CpuFeatures& f = cpu_features();
  const ActivationPrecision act = options.activations;
  switch (options.kernels) {
    case KernelChoice::Auto: return use_avx2() ? cpu::avx2_kernel(type, act) : cpu::scalar_kernel(type, act);
    case KernelChoice::Scalar: return cpu::scalar_kernel(type, act);
    case KernelChoice::Avx2: return f.avx2 && f.fma && f.f16c ? cpu::avx2_kernel(type, act) : nullptr;
  }
  return nullptr;
}

// Computes output rows [r0, r0 + n_rows) for every token with kernel k.
void run_rows(const cpu::DotKernel& k, const MatrixRef& w, const uint8_t* a, size_t a_stride, int64_t n_tok,
              int64_t r0, int64_t n_rows, float* y) {
  const auto* w0 = static_cast<const uint8_t*>(w.data) + static_cast<size_t>(r0) * w.row_stride;
  if (k.gemm != nullptr) {
    k.gemm(w0, w.row_stride, n_rows, a, a_stride, n_tok, w.cols, y + r0, w.rows);
    return;
  }
  for (int64_t t = 0; t < n_tok; ++t)
    for (int64_t r = 0; r < n_rows; ++r)
      y[t * w.rows + r0 + r] = k.dot(w0 + r * w.row_stride, a + t * a_stride, w.cols);
}

}  // namespace

void matmul(const MatrixRef& w, const float* x, int64_t n_tok, float* y, ThreadPool& pool,
            const MatmulOptions& options) {
  const cpu::DotKernel* k = find_kernel(w.type, options);
  if (k == nullptr) throw std::invalid_argument("matmul: no kernel for weight type " + std::string(dtype_name(w.type)));
  if (w.cols % dtype_info(w.type).block_size != 0 || w.cols % dtype_info(k->act_type).block_size != 0)
    throw std::invalid_argument("matmul: " + std::to_string(w.cols) + " columns is not a whole number of blocks");
  if (n_tok <= 0 || w.rows <= 0) return;

  // The activations in the kernel's format, one row per token, each quantized on its own.
  const uint8_t* a = reinterpret_cast<const uint8_t*>(x);
  size_t a_stride = static_cast<size_t>(w.cols) * sizeof(float);
  thread_local std::vector<uint8_t> scratch;
  if (k->act_type != DType::F32) {
    a_stride = row_bytes(k->act_type, w.cols);
    scratch.resize(a_stride * static_cast<size_t>(n_tok));
    uint8_t* q = scratch.data();
    pool.parallel_for(n_tok, kQuantizeGrain, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) k->quantize(x + t * w.cols, q + t * a_stride, w.cols);
    });
    a = q;
  }

  const int64_t n_blocks = (w.rows + kRowBlock - 1) / kRowBlock;
  pool.parallel_for(n_blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t r0 = b * kRowBlock;
      run_rows(*k, w, a, a_stride, n_tok, r0, std::min(kRowBlock, w.rows - r0), y);
    }
  });
}

void matmul_reference(const MatrixRef& w, const float* x, int64_t n_tok, float* y) {
  std::vector<float> row(static_cast<size_t>(w.cols));
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, static_cast<const uint8_t*>(w.data) + static_cast<size_t>(r) * w.row_stride, row.data(),
                   w.cols);
    for (int64_t t = 0; t < n_tok; ++t) {
      double sum = 0.0;
      for (int64_t c = 0; c < w.cols; ++c) sum += static_cast<double>(row[c]) * x[t * w.cols + c];
      y[t * w.rows + r] = static_cast<float>(sum);
    }
  }
}

const char* matmul_kernel_name(DType type, ActivationPrecision activations) {
  const cpu::DotKernel* k = find_kernel(type, MatmulOptions{activations, KernelChoice::Auto});
  return k == nullptr ? "none" : k->name;
}

}  // namespace inferscope
