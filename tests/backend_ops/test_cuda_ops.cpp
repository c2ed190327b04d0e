// The CUDA kernels (kernels/cuda/ops.h) against the CPU reference (kernels/cpu, core/sample) on a real
// GPU; every test that needs one skips, naming why, where no CUDA device is usable. Argument checks
// that throw before any launch run everywhere.
#include "kernels/cuda/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/sample/sampler.h"
#include "kernels/cpu/matmul/matmul.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/ops_kernels.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gemm.h"
#include "tests/support/cuda_device.h"
#include "tests/support/gemv_q8_reference.h"
#include "tests/support/quant_error.h"

namespace inferscope {
namespace {

using test::DeviceBuffer;

const DType kWeightTypes[] = {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0, DType::Q4_1};

// Row lengths to try: whole blocks for the block formats, any length for F32/F16.
std::vector<int64_t> cols_for(DType type) {
  if (dtype_info(type).block_size == 1) return {5, 33, 256, 1001, 4096};
  return {32, 96, 4096};
}

// A random matrix in its stored format (row r quantized from gaussian values), on the host.
struct HostMatrix {
  DType type;
  int64_t rows, cols;
  size_t stride;
  std::vector<uint8_t> bytes;

  MatrixRef ref() const { return MatrixRef{type, bytes.data(), rows, cols, stride}; }
  gpu::DeviceMatrix on(const DeviceBuffer<uint8_t>& device) const {
    return gpu::DeviceMatrix{type, device.get(), rows, cols, stride};
  }
};

HostMatrix random_matrix(DType type, int64_t rows, int64_t cols, uint32_t seed) {
  HostMatrix m{type, rows, cols, row_bytes(type, cols), {}};
  m.bytes.resize(m.stride * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<float> values = test::gaussian_row(cols, seed + static_cast<uint32_t>(r));
    quantize_row(type, values.data(), m.bytes.data() + r * m.stride, cols);
  }
  return m;
}

// sum (got - want)^2 / sum want^2.
double nmse(std::span<const float> got, std::span<const float> want) {
  double err = 0.0, ref = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    err += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
    ref += static_cast<double>(want[i]) * want[i];
  }
  return ref > 0.0 ? err / ref : err;
}

// Every element within rel * max(1, |want|); NaN never passes.
void expect_close(const std::vector<float>& got, const std::vector<float>& want, double rel, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_LE(std::fabs(static_cast<double>(got[i]) - want[i]), rel * std::fmax(1.0, std::fabs(want[i])))
        << what << " element " << i << ": " << got[i] << " vs " << want[i];
}

void expect_bitwise(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0) << what << " element " << i << ": " << got[i] << " vs " << want[i];
}

std::string describe(DType type, int64_t rows, int64_t cols, int64_t n_tok) {
  return std::string(dtype_name(type)) + " " + std::to_string(rows) + "x" + std::to_string(cols) + " tokens " +
         std::to_string(n_tok);
}

std::string describe(gpu::GemvKernel kernel) { return std::string(" ") + gpu::gemv_kernel_name(kernel); }

TEST(CudaOps, GemvMatchesCpuReference) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  for (gpu::GemvKernel kernel : gpu::kGemvKernels)
  for (DType type : kWeightTypes) {
    for (int64_t rows : {1, 7, 64, 257}) {
      for (int64_t cols : cols_for(type)) {
        const HostMatrix w = random_matrix(type, rows, cols, 100);
        const DeviceBuffer<uint8_t> w_dev(w.bytes);
        const std::vector<float> x = test::gaussian_row(gpu::kGemvMaxTokens * cols, 7);
        const DeviceBuffer<float> x_dev(x);
        for (int64_t n_tok = 1; n_tok <= gpu::kGemvMaxTokens; ++n_tok) {
          std::vector<float> want(static_cast<size_t>(n_tok * rows));
          matmul_reference(w.ref(), x.data(), n_tok, want.data());
          DeviceBuffer<float> y_dev(want.size());
          gpu::gemv(w.on(w_dev), x_dev.get(), n_tok, y_dev.get(), nullptr, kernel);
          // f32 sums of up to 4096 products in another order than the double reference
          EXPECT_LE(nmse(y_dev.download(), want), 5e-4) << describe(type, rows, cols, n_tok) << describe(kernel);
        }
      }
    }
  }
}

// Token t's outputs are the same bits whether it is alone, in a batch of 8, or in a batch of 3.
TEST(CudaOps, GemvIsBatchInvariant) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  constexpr int64_t kRows = 257;
  for (gpu::GemvKernel kernel : gpu::kGemvKernels)
  for (DType type : kWeightTypes) {
    const int64_t cols = dtype_info(type).block_size == 1 ? 1001 : 4096;
    const HostMatrix w = random_matrix(type, kRows, cols, 200);
    const DeviceBuffer<uint8_t> w_dev(w.bytes);
    const std::vector<float> x = test::gaussian_row(gpu::kGemvMaxTokens * cols, 9);
    const DeviceBuffer<float> x_dev(x);
    DeviceBuffer<float> batch_dev(gpu::kGemvMaxTokens * kRows);
    gpu::gemv(w.on(w_dev), x_dev.get(), gpu::kGemvMaxTokens, batch_dev.get(), nullptr, kernel);
    const std::vector<float> batch = batch_dev.download();
    for (int64_t t = 0; t < gpu::kGemvMaxTokens; ++t) {
      DeviceBuffer<float> one_dev(kRows);
      gpu::gemv(w.on(w_dev), x_dev.get() + t * cols, 1, one_dev.get(), nullptr, kernel);
      expect_bitwise(one_dev.download(), std::vector<float>(batch.begin() + t * kRows, batch.begin() + (t + 1) * kRows),
                     describe(type, kRows, cols, 1) + describe(kernel) + " token " + std::to_string(t));
    }
    DeviceBuffer<float> three_dev(3 * kRows);
    gpu::gemv(w.on(w_dev), x_dev.get() + 2 * cols, 3, three_dev.get(), nullptr, kernel);
    expect_bitwise(three_dev.download(), std::vector<float>(batch.begin() + 2 * kRows, batch.begin() + 5 * kRows),
                   describe(type, kRows, cols, 3) + describe(kernel) + " from token 2");
  }
}

const DType kQ8WeightTypes[] = {DType::Q8_0, DType::Q4_0, DType::Q4_1};

// The int8 activations are the CPU's Q8_1 codes and half scales, with the codes' sums, byte for byte.
TEST(CudaOps, QuantizeQ8ActivationsEqualsCpuQ8_1) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  for (int64_t cols : {32, 96, 4096}) {
    std::vector<float> x = test::gaussian_row(gpu::kGemvMaxTokens * cols, 13);
    std::fill_n(x.begin(), gpu::kQ8Block, 0.0f);  // a block of zeros: d = 0, every code 0
    const DeviceBuffer<float> x_dev(x);
    for (int64_t n_tok = 1; n_tok <= gpu::kGemvMaxTokens; ++n_tok) {
      DeviceBuffer<uint8_t> xq_dev(gpu::q8_activation_bytes(n_tok, cols));
      gpu::quantize_q8_activations(x_dev.get(), n_tok, cols, xq_dev.get(), nullptr);
      EXPECT_EQ(xq_dev.download(), test::quantize_q8_rows(x.data(), n_tok, cols).bytes())
          << cols << " columns, " << n_tok << " tokens";
    }
  }
}

// The dp4a GEMV equals its plain C++ statement (tests/support/gemv_q8_reference.h) bit for bit, for
// every token count: so each token's outputs never depend on the batch.
TEST(CudaOps, GemvQ8EqualsItsReferenceBitForBit) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  for (DType type : kQ8WeightTypes) {
    for (int64_t rows : {1, 7, 64, 257}) {
      for (int64_t cols : {32, 96, 4096}) {
        const HostMatrix w = random_matrix(type, rows, cols, 150);
        const DeviceBuffer<uint8_t> w_dev(w.bytes);
        const std::vector<float> x = test::gaussian_row(gpu::kGemvMaxTokens * cols, 17);
        for (int64_t n_tok = 1; n_tok <= gpu::kGemvMaxTokens; ++n_tok) {
          const test::Q8Rows xq = test::quantize_q8_rows(x.data(), n_tok, cols);
          const DeviceBuffer<uint8_t> xq_dev(xq.bytes());
          DeviceBuffer<float> y_dev(std::vector<float>(static_cast<size_t>(n_tok * rows), std::numeric_limits<float>::quiet_NaN()));
          gpu::gemv_q8(w.on(w_dev), xq_dev.get(), n_tok, y_dev.get(), nullptr);
          expect_bitwise(y_dev.download(), test::gemv_q8_reference(w.ref(), xq), describe(type, rows, cols, n_tok) + " dp4a");
        }
      }
    }
  }
}

// Refused before any launch, device or not: weights it does not read, token counts and widths it
// does not take.
TEST(CudaOps, GemvQ8RefusesWhatItCannotRead) {
  const gpu::DeviceMatrix f16{DType::F16, nullptr, 4, 64, row_bytes(DType::F16, 64)};
  EXPECT_THROW(gpu::gemv_q8(f16, nullptr, 1, nullptr, nullptr), std::invalid_argument);
  const gpu::DeviceMatrix q4{DType::Q4_0, nullptr, 4, 64, row_bytes(DType::Q4_0, 64)};
  EXPECT_THROW(gpu::gemv_q8(q4, nullptr, 0, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(gpu::gemv_q8(q4, nullptr, gpu::kGemvMaxTokens + 1, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(gpu::quantize_q8_activations(nullptr, 1, 48, nullptr, nullptr), std::invalid_argument);
  // misaligned: activations off 16 bytes, Q4_1 blocks off 4 (addresses never read: refused first)
  const auto* at = reinterpret_cast<const void*>(uintptr_t{0x1000});
  const auto* off = reinterpret_cast<const void*>(uintptr_t{0x1002});
  EXPECT_THROW(gpu::gemv_q8(q4, off, 1, nullptr, nullptr), std::invalid_argument);
  const gpu::DeviceMatrix q4_1{DType::Q4_1, off, 4, 64, row_bytes(DType::Q4_1, 64)};
  EXPECT_THROW(gpu::gemv_q8(q4_1, at, 1, nullptr, nullptr), std::invalid_argument);
  EXPECT_FALSE(gpu::gemv_q8_supported(DType::F32));
  for (DType type : kQ8WeightTypes) EXPECT_TRUE(gpu::gemv_q8_supported(type)) << dtype_name(type);
}

// Every weight decoded as the CPU dequantizes it, then rounded to the nearest half as the CPU rounds.
TEST(CudaOps, DequantizeF16EqualsCpuDequantizedRowsRounded) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  for (DType type : kWeightTypes) {
    for (int64_t cols : cols_for(type)) {
      const HostMatrix w = random_matrix(type, 5, cols, 400);
      const DeviceBuffer<uint8_t> w_dev(w.bytes);
      std::vector<uint16_t> want(static_cast<size_t>(w.rows * cols));
      std::vector<float> row(static_cast<size_t>(cols));
      for (int64_t r = 0; r < w.rows; ++r) {
        dequantize_row(type, w.bytes.data() + r * w.stride, row.data(), cols);
        for (int64_t c = 0; c < cols; ++c) want[r * cols + c] = f32_to_fp16(row[c]);
      }
      DeviceBuffer<uint16_t> out_dev(want.size());
      gpu::dequantize_f16(w.on(w_dev), out_dev.get(), nullptr);
      EXPECT_EQ(out_dev.download(), want) << describe(type, w.rows, cols, 0);
    }
  }
}

// The prefill GEMM (f16 inputs, f32 accumulation) against the double reference, for 9..512 tokens.
TEST(CudaOps, GemmMatchesCpuReference) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  struct Shape {
    int64_t n_tok, rows, cols;
  };
  const gpu::CublasHandle handle;
  for (DType type : kWeightTypes) {
    const bool any_width = dtype_info(type).block_size == 1;
    for (const Shape& shape : {Shape{9, 33, 64}, Shape{100, 257, any_width ? 1001 : 1024}, Shape{512, 96, 2048},
                               Shape{17, 1000, 576}}) {
      const HostMatrix w = random_matrix(type, shape.rows, shape.cols, 500);
      const DeviceBuffer<uint8_t> w_dev(w.bytes);
      const std::vector<float> x = test::gaussian_row(shape.n_tok * shape.cols, 11);
      const DeviceBuffer<float> x_dev(x);
      std::vector<float> want(static_cast<size_t>(shape.n_tok * shape.rows));
      matmul_reference(w.ref(), x.data(), shape.n_tok, want.data());
      // poisoned: every output must be written
      DeviceBuffer<float> y_dev(std::vector<float>(want.size(), std::numeric_limits<float>::quiet_NaN()));
      const size_t bytes = gpu::gemm_scratch_bytes(w.on(w_dev), shape.n_tok);
      DeviceBuffer<uint8_t> scratch(bytes);
      gpu::gemm(handle, w.on(w_dev), x_dev.get(), shape.n_tok, y_dev.get(), scratch.get(), bytes, nullptr);
      const std::vector<float> got = y_dev.download();
      const std::string what = describe(type, shape.rows, shape.cols, shape.n_tok);
      ASSERT_TRUE(std::none_of(got.begin(), got.end(), [](float v) { return std::isnan(v); })) << what;
      // the weights and activations rounded to f16 (2^-11 relative), the sums in f32
      EXPECT_LE(nmse(got, want), 5e-4) << what;
    }
  }
  // refused before anything runs: a type CUDA does not read, no tokens, too small a scratch
  const gpu::DeviceMatrix q6{DType::Q6_K, nullptr, 4, 256, row_bytes(DType::Q6_K, 256)};
  EXPECT_THROW(gpu::gemm(handle, q6, nullptr, 9, nullptr, nullptr, size_t{1} << 20, nullptr), std::invalid_argument);
  const gpu::DeviceMatrix q4{DType::Q4_0, nullptr, 4, 32, row_bytes(DType::Q4_0, 32)};
  EXPECT_THROW(gpu::gemm(handle, q4, nullptr, 0, nullptr, nullptr, size_t{1} << 20, nullptr), std::invalid_argument);
  EXPECT_THROW(gpu::gemm(handle, q4, nullptr, 9, nullptr, nullptr, gpu::gemm_scratch_bytes(q4, 9) - 1, nullptr),
               std::invalid_argument);
}

TEST(CudaOps, EmbeddingRowsEqualCpuDequantizedRows) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  constexpr int64_t kVocab = 11;
  const std::vector<int32_t> tokens = {3, 0, 10, 3, 7};
  const DeviceBuffer<int32_t> tokens_dev(tokens);
  for (DType type : kWeightTypes) {
    for (int64_t cols : cols_for(type)) {
      const HostMatrix table = random_matrix(type, kVocab, cols, 300);
      const DeviceBuffer<uint8_t> table_dev(table.bytes);
      std::vector<float> want(tokens.size() * static_cast<size_t>(cols));
      for (size_t t = 0; t < tokens.size(); ++t)
        dequantize_row(type, table.bytes.data() + tokens[t] * table.stride, want.data() + t * cols, cols);
      DeviceBuffer<float> out_dev(want.size());
      gpu::embedding(table.on(table_dev), tokens_dev.get(), static_cast<int64_t>(tokens.size()), out_dev.get(), nullptr);
      expect_bitwise(out_dev.download(), want, describe(type, kVocab, cols, static_cast<int64_t>(tokens.size())));
    }
  }
}

// More tokens in one step than a grid's y dimension holds (65,535): every row still looked up.
TEST(CudaOps, EmbeddingTakesMoreTokensThanAGridsYDimension) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  constexpr int64_t kVocab = 11, kCols = 32, kTokens = 70000;
  std::vector<int32_t> tokens(kTokens);
  for (int64_t t = 0; t < kTokens; ++t) tokens[static_cast<size_t>(t)] = static_cast<int32_t>((t * 7) % kVocab);
  const DeviceBuffer<int32_t> tokens_dev(tokens);
  const HostMatrix table = random_matrix(DType::Q8_0, kVocab, kCols, 301);
  const DeviceBuffer<uint8_t> table_dev(table.bytes);
  std::vector<float> want(tokens.size() * kCols);
  for (size_t t = 0; t < tokens.size(); ++t)
    dequantize_row(DType::Q8_0, table.bytes.data() + tokens[t] * table.stride, want.data() + t * kCols, kCols);
  DeviceBuffer<float> out_dev(want.size());
  gpu::embedding(table.on(table_dev), tokens_dev.get(), kTokens, out_dev.get(), nullptr);
  expect_bitwise(out_dev.download(), want, describe(DType::Q8_0, kVocab, kCols, kTokens));
}

TEST(CudaOps, AddRmsnormMatchesCpu) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  constexpr int64_t kTokens = 3;
  constexpr float kEps = 1e-5f;
  for (int64_t n : {1, 7, 576, 4096}) {
    for (bool with_delta : {true, false}) {
      const std::vector<float> residual = test::gaussian_row(kTokens * n, 1, 3.0f), delta = test::gaussian_row(kTokens * n, 2),
                               weight = test::gaussian_row(n, 3);
      std::vector<float> residual_want = residual, out_want(residual.size());
      for (int64_t t = 0; t < kTokens; ++t) {
        if (with_delta) add_inplace(residual_want.data() + t * n, delta.data() + t * n, n);
        rmsnorm(out_want.data() + t * n, residual_want.data() + t * n, weight.data(), n, kEps);
      }
      DeviceBuffer<float> residual_dev(residual), out_dev(residual.size());
      const DeviceBuffer<float> delta_dev(delta), weight_dev(weight);
      gpu::add_rmsnorm(residual_dev.get(), with_delta ? delta_dev.get() : nullptr, weight_dev.get(), out_dev.get(),
                       kTokens, n, kEps, nullptr);
      const std::string what = "n " + std::to_string(n) + (with_delta ? " with delta" : " without delta");
      expect_bitwise(residual_dev.download(), residual_want, what + " residual");
      // the double sum of squares is added in another order, so the scale may differ in its last bit
      expect_close(out_dev.download(), out_want, 1e-6, what + " out");
    }
  }
}

struct RopeCase {
  int64_t rope_dim;
  RopePairing pairing;
  bool factors, yarn;
};

TEST(CudaOps, RopeQkMatchesCpu) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  const std::vector<int32_t> positions = {0, 5, 1000, 70000};
  const auto n_tok = static_cast<int64_t>(positions.size());
  const DeviceBuffer<int32_t> positions_dev(positions);
  const RopeCase cases[] = {{128, RopePairing::Adjacent, false, false}, {128, RopePairing::Neox, false, false},
                            {64, RopePairing::Adjacent, true, false}, {128, RopePairing::Neox, true, true}};
  for (const RopeCase& rc : cases) {
    gpu::RopeShape shape;
    shape.n_q_heads = 4;
    shape.n_kv_heads = 2;
    shape.head_dim = 128;
    shape.rope_dim = rc.rope_dim;
    shape.freq_base = 500000.0f;
    shape.freq_scale = rc.yarn ? 0.25f : 1.0f;
    shape.pairing = rc.pairing;
    shape.use_yarn = rc.yarn;
    shape.yarn = rope_yarn(rc.rope_dim, shape.freq_base, shape.freq_scale, 8192);
    std::vector<float> factors(static_cast<size_t>(rc.rope_dim / 2));
    for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + static_cast<float>(i % 7);
    const DeviceBuffer<float> factors_dev(factors);
    if (rc.factors) shape.freq_factors = factors_dev.get();

    const int64_t q_len = shape.n_q_heads * shape.head_dim, k_len = shape.n_kv_heads * shape.head_dim;
    const std::vector<float> q = test::gaussian_row(n_tok * q_len, 4), k = test::gaussian_row(n_tok * k_len, 5);
    std::vector<float> q_want = q, k_want = k;
    for (int64_t t = 0; t < n_tok; ++t) {
      std::vector<float> cos_v(static_cast<size_t>(rc.rope_dim / 2)), sin_v(cos_v.size());
      rope_cos_sin(cos_v.data(), sin_v.data(), rc.rope_dim, positions[t], shape.freq_base, shape.freq_scale,
                   rc.factors ? factors.data() : nullptr, rc.yarn ? &shape.yarn : nullptr);
      rope_apply(q_want.data() + t * q_len, shape.n_q_heads, shape.head_dim, rc.rope_dim, cos_v.data(), sin_v.data(), rc.pairing);
      rope_apply(k_want.data() + t * k_len, shape.n_kv_heads, shape.head_dim, rc.rope_dim, cos_v.data(), sin_v.data(), rc.pairing);
    }
    DeviceBuffer<float> q_dev(q), k_dev(k);
    gpu::rope_qk(q_dev.get(), k_dev.get(), positions_dev.get(), n_tok, shape, nullptr);
    const std::string what = "rope_dim " + std::to_string(rc.rope_dim) + (rc.pairing == RopePairing::Neox ? " neox" : " adjacent") +
                             (rc.factors ? " factors" : "") + (rc.yarn ? " yarn" : "");
    // CUDA's double sincos may differ from glibc's in the last double bit, rarely moving a float cos/sin by an ulp
    expect_close(q_dev.download(), q_want, 1e-6, what + " q");
    expect_close(k_dev.download(), k_want, 1e-6, what + " k");
  }
}

TEST(CudaOps, SwigluMatchesCpuScalar) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  constexpr int64_t kN = 100003;
  const std::vector<float> gate = test::gaussian_row(kN, 6, 6.0f), up = test::gaussian_row(kN, 7, 2.0f);
  std::vector<float> want = gate;
  cpu::swiglu_scalar(want.data(), up.data(), kN);
  DeviceBuffer<float> gate_dev(gate);
  const DeviceBuffer<float> up_dev(up);
  gpu::swiglu(gate_dev.get(), up_dev.get(), kN, nullptr);
  // CUDA's expf is within 2 ulp of glibc's
  expect_close(gate_dev.download(), want, 1e-6, "swiglu");
}

TEST(CudaOps, ArgmaxMatchesSampler) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::mt19937 rng(19);
  std::uniform_int_distribution<int> small(-50, 50), kind(0, 999);
  for (int64_t n : {1, 7, 32000, 151936}) {
    constexpr int64_t kRows = 6;
    // few distinct values (ties everywhere), some NaNs; row 4 all NaN, row 5 NaN first
    std::vector<float> logits(static_cast<size_t>(kRows * n));
    for (float& v : logits) v = kind(rng) == 0 ? nan : static_cast<float>(small(rng));
    std::fill(logits.begin() + 4 * n, logits.begin() + 5 * n, nan);
    logits[5 * n] = nan;
    std::vector<int32_t> want(kRows);
    for (int64_t r = 0; r < kRows; ++r) want[r] = argmax(std::span<const float>(logits).subspan(r * n, n));
    const DeviceBuffer<float> logits_dev(logits);
    DeviceBuffer<int32_t> best_dev(kRows);
    gpu::argmax(logits_dev.get(), kRows, n, best_dev.get(), nullptr);
    EXPECT_EQ(best_dev.download(), want) << "n " << n;
  }
}

TEST(CudaOps, GemvRejectsTokenCountsAndTypesItCannotRun) {
  const gpu::DeviceMatrix w{DType::Q4_0, nullptr, 4, 32, row_bytes(DType::Q4_0, 32)};
  EXPECT_THROW(gpu::gemv(w, nullptr, 0, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(gpu::gemv(w, nullptr, gpu::kGemvMaxTokens + 1, nullptr, nullptr), std::invalid_argument);
  const gpu::DeviceMatrix q6{DType::Q6_K, nullptr, 4, 256, row_bytes(DType::Q6_K, 256)};
  EXPECT_FALSE(gpu::weight_type_supported(DType::Q6_K));
  EXPECT_THROW(gpu::gemv(q6, nullptr, 1, nullptr, nullptr), std::invalid_argument);
}

TEST(CudaOps, CudaErrorNamesTheCallAndCudasMessage) {
  try {
    INFERSCOPE_CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no CudaError";
  } catch (const gpu::CudaError& e) {
    EXPECT_EQ(e.code(), cudaErrorInvalidValue);
    EXPECT_NE(std::string(e.what()).find("cudaErrorInvalidValue failed at"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(invalid argument)"), std::string::npos) << e.what();
  }
}

TEST(CudaOps, CublasErrorNamesTheCallAndCublasMessage) {
  try {
    INFERSCOPE_CUBLAS_CHECK(CUBLAS_STATUS_INVALID_VALUE);
    FAIL() << "no CublasError";
  } catch (const gpu::CublasError& e) {
    EXPECT_EQ(e.code(), CUBLAS_STATUS_INVALID_VALUE);
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_INVALID_VALUE failed at"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE)), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace inferscope
