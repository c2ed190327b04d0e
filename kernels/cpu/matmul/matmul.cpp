// matmul: quantize each activation row once to the kernel's activation type (unless it takes f32
// activations as they are), then split the output rows (of one matrix, or of several fused ones
// sharing the activations) across threads; each output is one dot product of one weight row with
// one activation row.
#include "kernels/cpu/matmul/matmul.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/matmul/packed_rows.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/matmul/vec_dot.h"

namespace inferscope {
namespace {

// Output rows per block of the parallel job, handed to one gemm call (unless the kernel prepares its
// activations per call): its weight rows stay in L1 while all tokens stream past (a multiple of the
// packed kernels' eight rows).
constexpr int64_t kRowBlock = 32;
static_assert(kRowBlock % kPackedRows == 0);
// Activation rows per quantization chunk (quantizing a row costs about as much as one small dot).
constexpr int64_t kQuantizeGrain = 16;

const cpu::DotKernel* find_kernel(DType type, const MatmulOptions& options) {
  const CpuFeatures& f = cpu_features();
  const ActivationPrecision act = options.activations;
  switch (options.kernels) {
    case KernelChoice::Auto:
      return use_avx512vl() ? cpu::avx512_kernel(type, act)
             : use_avx2()   ? cpu::avx2_kernel(type, act)
                            : cpu::scalar_kernel(type, act);
    case KernelChoice::Scalar: return cpu::scalar_kernel(type, act);
    case KernelChoice::Avx2: return f.runs_avx2_kernels() ? cpu::avx2_kernel(type, act) : nullptr;
    case KernelChoice::Avx512: return f.runs_avx512vl_kernels() ? cpu::avx512_kernel(type, act) : nullptr;
  }
  return nullptr;
}

// Computes output rows [r0, r0 + n_rows) for every token with kernel k (r0 a multiple of 8).
void run_rows(const cpu::DotKernel& k, const MatrixRef& w, const uint8_t* a, size_t a_stride, int64_t n_tok,
              int64_t r0, int64_t n_rows, float* y) {
  // the packed groups first, where the kernel has them
  const int64_t packed_end = w.packed != nullptr && k.gemm_packed != nullptr ? w.rows / kPackedRows * kPackedRows : 0;
  if (r0 < packed_end) {
    const int64_t n_packed = std::min(n_rows, packed_end - r0);
    const size_t group_bytes = packed_group_bytes(w.type, w.cols);
    k.gemm_packed(static_cast<const uint8_t*>(w.packed) + r0 / kPackedRows * group_bytes, group_bytes,
                  n_packed / kPackedRows, a, a_stride, n_tok, w.cols, y + r0, w.rows);
    r0 += n_packed;
    n_rows -= n_packed;
    if (n_rows == 0) return;
  }
  const auto* w0 = static_cast<const uint8_t*>(w.data) + static_cast<size_t>(r0) * w.row_stride;
  if (k.gemm != nullptr) {
    k.gemm(w0, w.row_stride, n_rows, a, a_stride, n_tok, w.cols, y + r0, w.rows);
    return;
  }
  for (int64_t t = 0; t < n_tok; ++t)
    for (int64_t r = 0; r < n_rows; ++r)
      y[t * w.rows + r0 + r] = k.dot(w0 + r * w.row_stride, a + t * a_stride, w.cols);
}

// One target of a fused matmul, ready to run: its kernel, its activations and its row blocks.
struct Product {
  const cpu::DotKernel* k;
  const MatrixRef* w;
  float* y;
  const uint8_t* a = nullptr;
  size_t a_stride = 0;
  int64_t first_block = 0, end_block = 0;  // its row blocks' place in the job's list
};

}  // namespace

void matmul(const MatrixRef& w, const float* x, int64_t n_tok, float* y, ThreadPool& pool,
            const MatmulOptions& options) {
  const MatmulTarget target{w, y};
  matmul_fused({&target, 1}, x, n_tok, pool, options);
}

void matmul_fused(std::span<const MatmulTarget> targets, const float* x, int64_t n_tok, ThreadPool& pool,
                  const MatmulOptions& options) {
  if (targets.empty()) return;
  if (!options.fuse && targets.size() > 1) {
    // Unfused: each product alone, one dispatch each.
    for (const MatmulTarget& t : targets) matmul_fused({&t, 1}, x, n_tok, pool, options);
    return;
  }
  const int64_t cols = targets.front().w.cols;
  std::vector<Product> products;
  products.reserve(targets.size());
  int64_t n_blocks = 0;
  for (const MatmulTarget& t : targets) {
    const cpu::DotKernel* k = find_kernel(t.w.type, options);
    if (k == nullptr) throw std::invalid_argument("matmul: no kernel for weight type " + std::string(dtype_name(t.w.type)));
    if (t.w.cols % dtype_info(t.w.type).block_size != 0 || t.w.cols % dtype_info(k->act_type).block_size != 0)
      throw std::invalid_argument("matmul: " + std::to_string(t.w.cols) + " columns is not a whole number of blocks");
    if (t.w.cols != cols) throw std::invalid_argument("matmul: fused matrices differ in their number of columns");
    const int64_t first = n_blocks;
    n_blocks += (std::max<int64_t>(t.w.rows, 0) + kRowBlock - 1) / kRowBlock;
    products.push_back(Product{k, &t.w, t.y, nullptr, 0, first, n_blocks});
  }
  if (n_tok <= 0 || n_blocks == 0) return;

  // The activations in each kernel's format, one row per token, each quantized on its own, once per
  // format (f32 activations are used as they are).
  std::vector<const cpu::DotKernel*> formats;  // one kernel per distinct quantized format
  for (const Product& p : products) {
    const bool seen = std::any_of(formats.begin(), formats.end(), [&](auto* f) { return f->act_type == p.k->act_type; });
    if (p.k->act_type != DType::F32 && !seen) formats.push_back(p.k);
  }
  thread_local std::vector<uint8_t> scratch;
  size_t total = 0;
  for (const cpu::DotKernel* f : formats) total += row_bytes(f->act_type, cols) * static_cast<size_t>(n_tok);
  scratch.resize(total);
  uint8_t* q = scratch.data();
  for (const cpu::DotKernel* f : formats) {
    const size_t stride = row_bytes(f->act_type, cols);
    pool.parallel_for(n_tok, kQuantizeGrain, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) f->quantize(x + t * cols, q + t * stride, cols);
    });
    for (Product& p : products) {
      if (p.k->act_type != f->act_type) continue;
      p.a = q;
      p.a_stride = stride;
    }
    q += stride * static_cast<size_t>(n_tok);
  }
  for (Product& p : products) {
    if (p.k->act_type != DType::F32) continue;
    p.a = reinterpret_cast<const uint8_t*>(x);
    p.a_stride = static_cast<size_t>(cols) * sizeof(float);
  }

  // Row blocks of every product in one job: block b is block b - first_block of the product holding it.
  // A chunk's consecutive blocks of one product go in one call where the kernel prepares the
  // activations per call; otherwise a call per block keeps its rows in L1 while the token strips pass.
  pool.parallel_for(n_blocks, 1, [&](int64_t b0, int64_t b1) {
    size_t i = 0;
    for (int64_t b = b0; b < b1;) {
      while (b >= products[i].end_block) ++i;
      const Product& p = products[i];
      const int64_t end = p.k->prepares_per_call ? std::min(b1, p.end_block) : b + 1;
      const int64_t r0 = (b - p.first_block) * kRowBlock;
      run_rows(*p.k, *p.w, p.a, p.a_stride, n_tok, r0, std::min((end - b) * kRowBlock, p.w->rows - r0), p.y);
      b = end;
    }
  });
}

bool uses_packed_rows(const MatrixRef& w, const MatmulOptions& options) {
  const cpu::DotKernel* k = find_kernel(w.type, options);
  return k != nullptr && k->gemm_packed != nullptr;
}

LargePageBytes pack_rows_for(const MatrixRef& w, const MatmulOptions& options) {
  return uses_packed_rows(w, options) ? pack_rows(w) : LargePageBytes{};
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

const char* matmul_kernel_name(DType type, ActivationPrecision activations, KernelChoice kernels) {
  const cpu::DotKernel* k = find_kernel(type, MatmulOptions{activations, kernels});
  return k == nullptr ? "none" : k->name;
}

}  // namespace inferscope
