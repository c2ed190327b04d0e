// matmul and the per-type dot kernels (scalar and AVX2) against the plain reference, on random
// weights (random codes, random scales) and random activations; plus batch invariance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/matmul/matmul.h"
#include "kernels/cpu/matmul/packed_rows.h"
#include "kernels/format/quant_blocks.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/matmul/vec_dot.h"

namespace inferscope {
namespace {

const DType kWeightTypes[] = {DType::F32,  DType::F16,  DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,
                              DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K};

bool is_float_type(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

// Byte offsets of the f16 scale fields (d, m/dmin) inside one block of a quantized type.
std::vector<size_t> scale_fields(DType t) {
  switch (t) {
    case DType::Q4_0: return {offsetof(BlockQ4_0, d)};
    case DType::Q4_1: return {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)};
    case DType::Q5_0: return {offsetof(BlockQ5_0, d)};
    case DType::Q5_1: return {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)};
    case DType::Q8_0: return {offsetof(BlockQ8_0, d)};
    case DType::Q4_K: return {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
    case DType::Q5_K: return {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
    case DType::Q6_K: return {offsetof(BlockQ6_K, d)};
    default: return {};
  }
}

struct Weights {
  std::vector<uint8_t> bytes;
  MatrixRef ref;
};

// Float types: N(0,1) values rounded to the type. Block types: every code byte random (all code
// values occur) and every scale a random f16 in +-[0.005, 0.05].
Weights random_weights(DType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  Weights w;
  const size_t stride = row_bytes(type, cols);
  w.bytes.resize(stride * static_cast<size_t>(rows));
  if (is_float_type(type)) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (float& v : row) v = normal(rng);
      quantize_row(type, row.data(), w.bytes.data() + r * stride, cols);
    }
  } else {
    std::uniform_int_distribution<int> byte(0, 255);
    for (uint8_t& b : w.bytes) b = static_cast<uint8_t>(byte(rng));
    std::uniform_real_distribution<float> mag(0.005f, 0.05f);
    const size_t block_bytes = dtype_info(type).block_bytes;
    for (size_t off = 0; off < w.bytes.size(); off += block_bytes)
      for (size_t field : scale_fields(type)) {
        const uint16_t h = f32_to_fp16(byte(rng) & 1 ? mag(rng) : -mag(rng));
        std::memcpy(w.bytes.data() + off + field, &h, sizeof h);
      }
  }
  w.ref = MatrixRef{type, w.bytes.data(), rows, cols, stride};
  return w;
}

std::vector<float> random_activations(int64_t n_tok, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n_tok * cols));
  for (float& v : x) v = normal(rng);
  return x;
}

std::vector<float> poisoned(size_t n) { return std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()); }

// The reference and, per output, the sum of its squared terms sum_c (w_rc x_tc)^2: the size an output
// has before cancellation, so that an output that happens to be near 0 does not blow up the ratio.
struct Reference {
  std::vector<float> y;
  std::vector<double> term_sq;
};

Reference reference(const MatrixRef& w, const std::vector<float>& x, int64_t n_tok) {
  Reference ref{std::vector<float>(static_cast<size_t>(w.rows * n_tok)), {}};
  matmul_reference(w, x.data(), n_tok, ref.y.data());
  std::vector<float> row(static_cast<size_t>(w.cols));
  ref.term_sq.resize(ref.y.size());
  for (int64_t r = 0; r < w.rows; ++r) {
    dequantize_row(w.type, static_cast<const uint8_t*>(w.data) + r * w.row_stride, row.data(), w.cols);
    for (int64_t t = 0; t < n_tok; ++t) {
      double sq = 0.0;
      for (int64_t c = 0; c < w.cols; ++c) sq += std::pow(static_cast<double>(row[c]) * x[t * w.cols + c], 2);
      ref.term_sq[t * w.rows + r] = sq;
    }
  }
  return ref;
}

// Normalised MSE: sum (y - ref)^2 / sum term_sq; NaN if any y is not finite (every bound check fails).
double nmse(const std::vector<float>& y, const Reference& ref) {
  double err = 0.0, norm = 0.0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) return std::numeric_limits<double>::quiet_NaN();
    err += std::pow(static_cast<double>(y[i]) - ref.y[i], 2);
    norm += ref.term_sq[i];
  }
  return err / norm;
}

// Bound against the float reference: float weights and f32 activations see only f32 rounding; int8
// activations also see the activations rounded to 8 bits: uniform error of step amax/127 per block of
// 32, (amax/127)^2 / 12 of the variance, 3e-5 for normal values (amax ~ 2.5 sigma), 5e-4 with room
// for the products with rounded weights and blocks holding outliers.
double nmse_bound(DType t, ActivationPrecision p) {
  return is_float_type(t) || p == ActivationPrecision::F32 ? 1e-12 : 5e-4;
}

// Largest |y - ref| over the size of the output's terms, sqrt(term_sq): about sqrt(cols) f32 ulps when
// only f32 rounding differs. NaN if any y is not finite.
double max_rel_error(const std::vector<float>& y, const Reference& ref) {
  double worst = 0.0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) return std::numeric_limits<double>::quiet_NaN();
    worst = std::max(worst, std::fabs(static_cast<double>(y[i]) - ref.y[i]) / std::sqrt(ref.term_sq[i]));
  }
  return worst;
}

// Bound against the reference on the activations as the kernel sees them (activation format act):
// f32 accumulation only, except that Q8_1 stores each block's activation sum as an f16 (Q4_1/Q5_1
// use it for the mins).
double exact_bound(DType act) { return act == DType::Q8_1 ? 1e-7 : 1e-12; }

// The activation format the kernel family uses for this weight type and precision.
DType act_type(DType t, ActivationPrecision p) { return cpu::scalar_kernel(t, p)->act_type; }

// X rounded through the activation format and back: what the integer kernels really multiply.
std::vector<float> as_kernel_sees(const std::vector<float>& x, int64_t n_tok, int64_t cols, DType act) {
  if (act == DType::F32) return x;
  std::vector<uint8_t> q(row_bytes(act, cols));
  std::vector<float> back(x.size());
  for (int64_t t = 0; t < n_tok; ++t) {
    quantize_row(act, x.data() + t * cols, q.data(), cols);
    dequantize_row(act, q.data(), back.data() + t * cols, cols);
  }
  return back;
}

bool avx2_available() { return cpu_features().runs_avx2_kernels(); }
bool avx512vl_available() { return cpu_features().runs_avx512vl_kernels(); }

// The family's kernel for this weight type and activation precision (the CPU has the family).
const cpu::DotKernel* family_kernel(KernelChoice choice, DType t, ActivationPrecision p) {
  switch (choice) {
    case KernelChoice::Avx2: return cpu::avx2_kernel(t, p);
    case KernelChoice::Avx512: return cpu::avx512_kernel(t, p);
    default: return cpu::scalar_kernel(t, p);
  }
}

using Param = std::tuple<DType, ActivationPrecision, KernelChoice>;

class MatmulTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (choice() == KernelChoice::Avx2 && !avx2_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
    if (choice() == KernelChoice::Avx512 && !avx512vl_available()) GTEST_SKIP() << "CPU lacks AVX-512F/VL";
  }
  DType type() const { return std::get<0>(GetParam()); }
  ActivationPrecision precision() const { return std::get<1>(GetParam()); }
  KernelChoice choice() const { return std::get<2>(GetParam()); }
  MatmulOptions options() const { return MatmulOptions{precision(), choice()}; }
  const cpu::DotKernel& kernel() const {
    return *family_kernel(choice(), type(), precision());
  }
  // Column counts: whole blocks, including a single block and odd block counts.
  std::vector<int64_t> col_grid() const {
    const int64_t bs = dtype_info(type()).block_size;
    if (bs == 1) return {1, 7, 33, 96, 577};
    if (bs == 32) return {32, 96, 576};
    return {256, 768};
  }
};

TEST_P(MatmulTest, MatchesReferenceOnOddShapes) {
  std::mt19937 rng(1234 + static_cast<int>(type()));
  ThreadPool pool(2);
  for (int64_t cols : col_grid())
    for (int64_t rows : {1, 3, 37})
      for (int64_t n_tok : {1, 2, 3, 4, 5, 7, 64}) {
        SCOPED_TRACE("cols " + std::to_string(cols) + " rows " + std::to_string(rows) + " n_tok " +
                     std::to_string(n_tok));
        const Weights w = random_weights(type(), rows, cols, rng);
        const std::vector<float> x = random_activations(n_tok, cols, rng);
        std::vector<float> y = poisoned(static_cast<size_t>(rows * n_tok));
        matmul(w.ref, x.data(), n_tok, y.data(), pool, options());

        const Reference ref = reference(w.ref, x, n_tok);
        EXPECT_LT(nmse(y, ref), nmse_bound(type(), precision()));
        // f32 activations: every output within f32 rounding of the double reference
        if (precision() == ActivationPrecision::F32) {
          EXPECT_LT(max_rel_error(y, ref), 1e-5);
        }
        // against the activations as the kernel sees them, only the float accumulation differs
        const DType act = act_type(type(), precision());
        const std::vector<float> xk = as_kernel_sees(x, n_tok, cols, act);
        EXPECT_LT(nmse(y, reference(w.ref, xk, n_tok)), exact_bound(act));
      }
}

TEST_P(MatmulTest, GemmOutputsEqualSingleDots) {
  const cpu::DotKernel& k = kernel();
  std::mt19937 rng(99);
  const int64_t rows = 11, cols = col_grid().back();
  const Weights w = random_weights(type(), rows, cols, rng);
  const size_t a_stride = row_bytes(k.act_type, cols);
  ThreadPool pool(1);
  // every token count up to two full 8-token strips and a partial one: each tile width the kernels have
  for (int64_t n_tok = 1; n_tok <= 17; ++n_tok) {
    const std::vector<float> x = random_activations(n_tok, cols, rng);
    std::vector<uint8_t> a(a_stride * n_tok);
    for (int64_t t = 0; t < n_tok; ++t) quantize_row(k.act_type, x.data() + t * cols, a.data() + t * a_stride, cols);
    std::vector<float> y = poisoned(static_cast<size_t>(rows * n_tok));
    matmul(w.ref, x.data(), n_tok, y.data(), pool, options());
    for (int64_t t = 0; t < n_tok; ++t)
      for (int64_t r = 0; r < rows; ++r) {
        const float single = k.dot(w.bytes.data() + r * w.ref.row_stride, a.data() + t * a_stride, cols);
        ASSERT_EQ(std::memcmp(&single, &y[t * rows + r], sizeof(float)), 0) << "n_tok " << n_tok << " t " << t << " r " << r;
      }
  }
}

// A batch too wide for one strip of prepared tokens (1 MiB of them: 31 tokens of 8192 columns) goes in
// strips, in token pairs on the 512-bit path: every output is still its single dot, bit for bit.
TEST_P(MatmulTest, TokensBeyondOneStripEqualSingleDots) {
  const cpu::DotKernel& k = kernel();
  std::mt19937 rng(31);
  const int64_t rows = 9, cols = 8192, n_tok = 67;
  const Weights w = random_weights(type(), rows, cols, rng);
  const size_t a_stride = row_bytes(k.act_type, cols);
  const std::vector<float> x = random_activations(n_tok, cols, rng);
  std::vector<uint8_t> a(a_stride * n_tok);
  for (int64_t t = 0; t < n_tok; ++t) quantize_row(k.act_type, x.data() + t * cols, a.data() + t * a_stride, cols);
  std::vector<float> y = poisoned(static_cast<size_t>(rows * n_tok));
  ThreadPool pool(2);
  matmul(w.ref, x.data(), n_tok, y.data(), pool, options());
  for (int64_t t = 0; t < n_tok; ++t)
    for (int64_t r = 0; r < rows; ++r) {
      const float single = k.dot(w.bytes.data() + r * w.ref.row_stride, a.data() + t * a_stride, cols);
      ASSERT_EQ(std::memcmp(&single, &y[t * rows + r], sizeof(float)), 0) << "t " << t << " r " << r;
    }
}

TEST_P(MatmulTest, BatchInvariantAcrossBatchAndThreads) {
  std::mt19937 rng(7);
  const int64_t rows = 45, n_tok = 64, cols = col_grid().back();
  const Weights w = random_weights(type(), rows, cols, rng);
  const std::vector<float> x = random_activations(n_tok, cols, rng);

  std::vector<float> full = poisoned(static_cast<size_t>(rows * n_tok));
  ThreadPool pool1(1);
  matmul(w.ref, x.data(), n_tok, full.data(), pool1, options());
  // every output written (the poison is gone), so equal bytes below mean equal results
  for (float v : full) ASSERT_TRUE(std::isfinite(v));

  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    std::vector<float> y = poisoned(full.size());
    matmul(w.ref, x.data(), n_tok, y.data(), pool, options());
    EXPECT_EQ(std::memcmp(y.data(), full.data(), full.size() * sizeof(float)), 0) << threads << " threads";
  }

  ThreadPool pool3(3);
  // each row alone, and each row inside a batch of 7 starting at every offset (other neighbours)
  for (int64_t t = 0; t < n_tok; ++t) {
    std::vector<float> alone = poisoned(static_cast<size_t>(rows));
    matmul(w.ref, x.data() + t * cols, 1, alone.data(), pool3, options());
    ASSERT_EQ(std::memcmp(alone.data(), &full[t * rows], rows * sizeof(float)), 0) << "token " << t << " alone";
  }
  for (int64_t start = 0; start + 7 <= n_tok; start += 5) {
    std::vector<float> part = poisoned(static_cast<size_t>(rows * 7));
    matmul(w.ref, x.data() + start * cols, 7, part.data(), pool3, options());
    ASSERT_EQ(std::memcmp(part.data(), &full[start * rows], part.size() * sizeof(float)), 0) << "batch at " << start;
  }
}

// Wide rows and a long batch: more tokens than some kernels prepare at once (the packed f32-activation
// kernels take 4 MiB of prepared activations, 124 tokens of 8192 columns), and every token still gets
// the bits it gets alone.
TEST_P(MatmulTest, LongBatchOfWideRowsMatchesTokenByToken) {
  std::mt19937 rng(11);
  const int64_t rows = 9, cols = 8192, n_tok = 130;
  const Weights w = random_weights(type(), rows, cols, rng);
  const std::vector<float> x = random_activations(n_tok, cols, rng);
  ThreadPool pool(2);
  std::vector<float> full = poisoned(static_cast<size_t>(rows * n_tok));
  matmul(w.ref, x.data(), n_tok, full.data(), pool, options());
  for (float v : full) ASSERT_TRUE(std::isfinite(v));
  for (int64_t t : {int64_t{0}, int64_t{123}, int64_t{124}, int64_t{129}}) {
    std::vector<float> alone = poisoned(static_cast<size_t>(rows));
    matmul(w.ref, x.data() + t * cols, 1, alone.data(), pool, options());
    EXPECT_EQ(std::memcmp(alone.data(), &full[t * rows], rows * sizeof(float)), 0) << "token " << t;
  }
}

TEST_P(MatmulTest, FusedEqualsSeparate) {
  std::mt19937 rng(21);
  const int64_t cols = col_grid().back();
  const Weights a = random_weights(type(), 37, cols, rng), b = random_weights(type(), 5, cols, rng),
                c = random_weights(type(), 70, cols, rng);
  ThreadPool pool(2);
  for (int64_t n_tok : {1, 9}) {
    const std::vector<float> x = random_activations(n_tok, cols, rng);
    std::vector<float> fused[3], separate[3];
    const Weights* ws[3] = {&a, &b, &c};
    std::vector<MatmulTarget> targets;
    for (int i = 0; i < 3; ++i) {
      fused[i] = poisoned(static_cast<size_t>(ws[i]->ref.rows * n_tok));
      separate[i] = poisoned(fused[i].size());
      matmul(ws[i]->ref, x.data(), n_tok, separate[i].data(), pool, options());
      targets.push_back(MatmulTarget{ws[i]->ref, fused[i].data()});
    }
    const int64_t before = pool.dispatches();
    matmul_fused(targets, x.data(), n_tok, pool, options());
    const int64_t fused_dispatches = pool.dispatches() - before;
    for (int i = 0; i < 3; ++i) {
      for (float v : separate[i]) ASSERT_TRUE(std::isfinite(v));
      EXPECT_EQ(std::memcmp(fused[i].data(), separate[i].data(), fused[i].size() * sizeof(float)), 0)
          << "matrix " << i << ", " << n_tok << " tokens";
    }
    // Fusion off: each product on its own dispatch, the same bits.
    MatmulOptions unfused = options();
    unfused.fuse = false;
    for (int i = 0; i < 3; ++i) std::fill(fused[i].begin(), fused[i].end(), std::nanf(""));
    const int64_t start = pool.dispatches();
    matmul_fused(targets, x.data(), n_tok, pool, unfused);
    EXPECT_GT(pool.dispatches() - start, fused_dispatches) << n_tok << " tokens";
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(std::memcmp(fused[i].data(), separate[i].data(), fused[i].size() * sizeof(float)), 0)
          << "unfused matrix " << i << ", " << n_tok << " tokens";
    }
  }
}

// Where the kernel multiplies rows packed eight at a time (the AVX2 int8 kernels of Q4_0, Q4_1, Q8_0,
// Q4_K and Q6_K, and the AVX2 and AVX-512VL f32-activation kernels of every quantized type), every
// output is the same bytes with the packed rows as without: whole groups packed, the last rows % 8
// unpacked, any token count.
TEST_P(MatmulTest, PackedRowsGiveTheSameOutputs) {
  const bool q5 = type() == DType::Q5_0 || type() == DType::Q5_1 || type() == DType::Q5_K;
  const bool packs = choice() != KernelChoice::Scalar && rows_packable(type()) &&
                     (precision() == ActivationPrecision::F32 || !q5);  // the Q5 int8 kernels read the file's rows
  EXPECT_EQ(kernel().gemm_packed != nullptr, packs);
  std::mt19937 rng(21);
  const int64_t cols = col_grid().back();
  ThreadPool pool(2);
  for (int64_t rows : {3, 8, 37, 72}) {
    const Weights w = random_weights(type(), rows, cols, rng);
    const LargePageBytes packed = pack_rows_for(w.ref, options());
    ASSERT_EQ(packed.size(), packs ? static_cast<size_t>(rows / 8) * packed_group_bytes(type(), cols) : 0u) << rows << " rows";
    MatrixRef with = w.ref;
    with.packed = packed.empty() ? nullptr : packed.data();
    for (int64_t n_tok : {1, 2, 3, 4, 5, 9}) {
      const std::vector<float> x = random_activations(n_tok, cols, rng);
      std::vector<float> plain = poisoned(static_cast<size_t>(rows * n_tok)), fast = plain;
      matmul(w.ref, x.data(), n_tok, plain.data(), pool, options());
      matmul(with, x.data(), n_tok, fast.data(), pool, options());
      for (float v : fast) ASSERT_TRUE(std::isfinite(v));
      ASSERT_EQ(std::memcmp(plain.data(), fast.data(), plain.size() * sizeof(float)), 0)
          << rows << " rows, " << n_tok << " tokens";
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  return std::string(dtype_name(std::get<0>(info.param))) +
         (std::get<1>(info.param) == ActivationPrecision::F32 ? "_f32act" : "_q8act") +
         (std::get<2>(info.param) == KernelChoice::Avx512 ? "_avx512"
          : std::get<2>(info.param) == KernelChoice::Avx2 ? "_avx2"
                                                           : "_scalar");
}

INSTANTIATE_TEST_SUITE_P(AllTypes, MatmulTest,
                         ::testing::Combine(::testing::ValuesIn(kWeightTypes),
                                            ::testing::Values(ActivationPrecision::F32, ActivationPrecision::Q8),
                                            ::testing::Values(KernelChoice::Scalar, KernelChoice::Avx2,
                                                              KernelChoice::Avx512)),
                         param_name);

// Q4_K, Q5_K: row i's sub-block scales and mins of the file's block src unpacked into bytes in the
// packed block g (zero for a missing row, i >= rows).
template <class Block, class Packed>
void expect_k_scales_unpacked(const uint8_t* src, const uint8_t* g, int64_t i, int64_t rows) {
  const auto& packed = *reinterpret_cast<const Packed*>(g);
  for (int j = 0; j < 8; ++j) {
    uint8_t scale = 0, min = 0;
    if (i < rows) k_scale_min(j, reinterpret_cast<const Block*>(src)->scales, scale, min);
    EXPECT_EQ(packed.scales[j][i], scale) << "sub-block " << j;
    EXPECT_EQ(packed.mins[j / 2][i][j % 2], min) << "sub-block " << j;
  }
}

// The packed layout: block b of a group holds the rows' d fields (then m/dmin fields), the K-quants'
// sub-block scales (Q4_K's 6-bit scales and mins unpacked), then each row's 4-byte code piece c in
// turn (Q6_K: ql, then qh, placed in the order the kernel reads them: ql pieces 16h + c and
// 16h + 8 + c, then qh piece 8h + c, for h = 0, 1 and c = 0..7); a short group's missing rows are zero.
TEST(PackedRows, InterleaveScalesAndFourBytePieces) {
  for (DType type : {DType::Q4_0, DType::Q4_1, DType::Q8_0, DType::Q4_K, DType::Q6_K}) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    const bool k_quant = type == DType::Q4_K, q6_k = type == DType::Q6_K;
    EXPECT_TRUE(rows_packable(type));
    const int64_t rows = 3, cols = 512;
    const int64_t nb = cols / dtype_info(type).block_size;
    const size_t block = dtype_info(type).block_bytes, stride = row_bytes(type, cols);
    const size_t n_fields = type == DType::Q4_1 || k_quant ? 2 : 1;
    const size_t scales_at = q6_k ? offsetof(BlockQ6_K, d) : 0;
    const size_t codes_at = k_quant ? offsetof(BlockQ4_K, qs) : q6_k ? 0 : 2 * n_fields;
    const size_t packed_codes_at = k_quant ? offsetof(PackedQ4_Kx8, qs) : q6_k ? offsetof(PackedQ6_Kx8, codes) : 16 * n_fields;
    const size_t code_bytes = q6_k ? sizeof(BlockQ6_K::ql) + sizeof(BlockQ6_K::qh) : block - codes_at;
    const size_t packed_block = packed_group_bytes(type, cols) / nb, pieces = code_bytes / 4;
    // the slot of file piece c: Q6_K's trios (ql of elements 0..31 of a 128, ql of 32..63, qh), else c
    const auto slot = [&](size_t c) -> size_t {
      if (!q6_k) return c;
      if (c < 32) return 3 * (8 * (c / 16) + c % 8) + c % 16 / 8;
      return 3 * (c - 32) + 2;
    };
    std::vector<uint8_t> bytes(stride * rows);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
    const MatrixRef w{type, bytes.data(), rows, cols, stride};
    std::vector<uint8_t> group(packed_group_bytes(type, cols), 0xAA);
    pack_row_group(w, 0, rows, group.data());
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* g = group.data() + b * packed_block;
      for (size_t i = 0; i < 8; ++i) {
        SCOPED_TRACE("block " + std::to_string(b) + " row " + std::to_string(i));
        const uint8_t* src = bytes.data() + i * stride + b * block;
        for (size_t f = 0; f < n_fields; ++f)
          for (size_t k = 0; k < 2; ++k) EXPECT_EQ(g[(f * 8 + i) * 2 + k], i < rows ? src[scales_at + 2 * f + k] : 0);
        for (size_t c = 0; c < pieces; ++c)
          for (size_t k = 0; k < 4; ++k)
            EXPECT_EQ(g[packed_codes_at + (slot(c) * 8 + i) * 4 + k], i < rows ? src[codes_at + 4 * c + k] : 0)
                << "piece " << c;
        if (q6_k) {
          for (int j = 0; j < 16; ++j)
            EXPECT_EQ(reinterpret_cast<const PackedQ6_Kx8*>(g)->scales[j][i],
                      i < rows ? reinterpret_cast<const BlockQ6_K*>(src)->scales[j] : 0) << "sub-block " << j;
        }
        if (k_quant) expect_k_scales_unpacked<BlockQ4_K, PackedQ4_Kx8>(src, g, i, rows);
      }
    }
  }
}

// The Q5 types pack as their nibble formats (the f16 scales first; Q5_K's sub-block scales and mins
// unpacked as Q4_K's), with each row's fifth bits in 32-bit words: word w covers steps 4w..4w+3 of
// the kernel's reading order (a step: the low run's elements 4c..4c+3 and the high run's, whose runs
// are the block's two halves for Q5_0/Q5_1 and sub-blocks 2k, 2k + 1 for Q5_K, eight steps a span);
// bit j of byte b is the fifth bit of step 4w + j's low element b, bit 4 + j its high element b's.
// A short group's missing rows are zero.
TEST(PackedRows, Q5FifthBitsLieInStepWords) {
  std::mt19937 rng(5);
  for (DType type : {DType::Q5_0, DType::Q5_1, DType::Q5_K}) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    EXPECT_TRUE(rows_packable(type));
    const bool k_quant = type == DType::Q5_K;
    const int64_t rows = 5, cols = 512, nb = cols / dtype_info(type).block_size;
    const Weights w = random_weights(type, rows, cols, rng);
    std::vector<uint8_t> group(packed_group_bytes(type, cols), 0xAA);
    pack_row_group(w.ref, 0, rows, group.data());
    ASSERT_EQ(group.size(), static_cast<size_t>(nb) * (k_quant ? sizeof(PackedQ5_Kx8)
                                                               : type == DType::Q5_0 ? sizeof(PackedQ5_0x8)
                                                                                     : sizeof(PackedQ5_1x8)));
    const size_t block = dtype_info(type).block_bytes, packed_block = group.size() / nb;
    const size_t qh_at = k_quant ? offsetof(PackedQ5_Kx8, qh) : type == DType::Q5_0 ? offsetof(PackedQ5_0x8, qh)
                                                                                       : offsetof(PackedQ5_1x8, qh);
    const size_t qs_at = k_quant ? offsetof(PackedQ5_Kx8, qs) : qh_at + 32;
    const int run = k_quant ? 32 : 16, steps = run / 4;  // elements per run, steps per span
    for (int64_t b = 0; b < nb; ++b)
      for (int64_t i = 0; i < 8; ++i) {
        SCOPED_TRACE("block " + std::to_string(b) + " row " + std::to_string(i));
        const uint8_t* g = group.data() + b * packed_block;
        const uint8_t* src = w.bytes.data() + i * w.ref.row_stride + b * block;
        const size_t src_qh = k_quant ? offsetof(BlockQ5_K, qh) : type == DType::Q5_0 ? offsetof(BlockQ5_0, qh)
                                                                                       : offsetof(BlockQ5_1, qh);
        const size_t src_qs = k_quant ? offsetof(BlockQ5_K, qs) : src_qh + 4;
        for (size_t f = 0; f < scale_fields(type).size(); ++f)
          for (size_t k = 0; k < 2; ++k)
            EXPECT_EQ(g[(f * 8 + i) * 2 + k], i < rows ? src[scale_fields(type)[f] + k] : 0) << "scale field " << f;
        for (int p = 0; p < (k_quant ? 32 : 4); ++p)
          for (int k = 0; k < 4; ++k)
            EXPECT_EQ(g[qs_at + (p * 8 + i) * 4 + k], i < rows ? src[src_qs + 4 * p + k] : 0) << "piece " << p;
        if (k_quant) expect_k_scales_unpacked<BlockQ5_K, PackedQ5_Kx8>(src, g, i, rows);
        // every element's fifth bit, from the file's qh (Q5_0/Q5_1: bit x of a little-endian word;
        // Q5_K: element 32 j + l in bit j of qh[l]) to its word, byte and bit
        for (int x = 0; x < dtype_info(type).block_size; ++x) {
          const int file_bit = i >= rows ? 0 : k_quant ? src[src_qh + x % 32] >> (x / 32) & 1 : src[src_qh + x / 8] >> (x % 8) & 1;
          const int span = x / (2 * run), in_span = x % (2 * run), high = in_span / run;
          const int step = steps * span + in_span % run / 4, byte = x % 4;
          const int packed_bit = g[qh_at + (step / 4 * 8 + i) * 4 + byte] >> (step % 4 + 4 * high) & 1;
          EXPECT_EQ(packed_bit, file_bit) << "element " << x;
        }
      }
  }
}

// Every kernel that rounds its activations (the int8 families) does it exactly as quantize_row does.
TEST(MatmulKernels, ActivationQuantizersMatchQuantizeRow) {
  std::mt19937 rng(11);
  const int64_t cols = 2048;
  std::vector<float> x = random_activations(1, cols, rng);
  for (int64_t i = 0; i < 256; ++i) x[i] = 0.0f;                 // an all-zero block (d = 0)
  for (int64_t i = 256; i < 512; ++i) x[i] *= 1e-30f;            // tiny values
  for (int64_t i = 512; i < 768; ++i) x[i] *= 1e6f;              // large values
  for (int64_t i = 768; i < 1024; ++i) x[i] = static_cast<float>(i % 255 - 127) * 0.5f;  // multiples of 0.5
  x[1024] = 127.0f;  // with amax 127, d = 1 and the tie-making values below round exactly
  for (int64_t i = 1025; i < 1056; ++i) x[i] = static_cast<float>(i - 1040) + 0.5f;
  for (int64_t i = 1056; i < 1088; ++i) x[i] = 1e7f * static_cast<float>(i - 1070);  // d beyond the f16 range
  // the largest magnitude twice with opposite signs in one 256-block: the first one's sign sets Q8_K's d
  for (int64_t i = 1280; i < 1536; ++i) x[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
  x[1287] = -5.0f;
  x[1380] = 5.0f;
  int checked = 0;
  for (DType t : kWeightTypes) {
    for (const cpu::DotKernel* k : {cpu::scalar_kernel(t, ActivationPrecision::Q8),
                                    avx2_available() ? cpu::avx2_kernel(t, ActivationPrecision::Q8) : nullptr}) {
      if (k == nullptr || k->quantize == nullptr) continue;
      SCOPED_TRACE(std::string(dtype_name(t)) + " x " + std::string(dtype_name(k->act_type)));
      std::vector<uint8_t> want(row_bytes(k->act_type, cols)), got(want.size(), 0xAB);
      quantize_row(k->act_type, x.data(), want.data(), cols);
      k->quantize(x.data(), got.data(), cols);
      EXPECT_EQ(got, want);
      ++checked;
    }
  }
  EXPECT_GE(checked, 10) << "every quantized weight type has an int8 kernel per family";
}

// Q8_K's quantizers agree on blocks holding a NaN or an infinity too (one block each, among finite
// ones), and on a block so small that its scale -127 / max overflows to infinity (its zeros then
// scale to NaN, which quantize_row's clamp turns into 127).
TEST(MatmulKernels, Q8KQuantizersAgreeOnNonFiniteValues) {
  std::mt19937 rng(12);
  const int64_t cols = 1024;
  std::vector<float> x = random_activations(1, cols, rng);
  x[300] = std::numeric_limits<float>::quiet_NaN();
  x[600] = std::numeric_limits<float>::infinity();
  x[601] = -std::numeric_limits<float>::infinity();
  for (int64_t i = 768; i < 1024; ++i) x[i] = 0.0f;
  x[770] = 1e-38f;
  x[771] = -5e-39f;
  std::vector<uint8_t> want(row_bytes(DType::Q8_K, cols));
  quantize_row(DType::Q8_K, x.data(), want.data(), cols);
  int checked = 0;
  for (const cpu::DotKernel* k : {cpu::scalar_kernel(DType::Q4_K, ActivationPrecision::Q8),
                                  avx2_available() ? cpu::avx2_kernel(DType::Q4_K, ActivationPrecision::Q8) : nullptr}) {
    if (k == nullptr) continue;
    SCOPED_TRACE(k->name);
    std::vector<uint8_t> got(want.size(), 0xAB);
    k->quantize(x.data(), got.data(), cols);
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size()));
    ++checked;
  }
  EXPECT_GE(checked, 1);
}

// Every int8 kernel family this CPU runs, over rows packed or not, on 1 and 4 tokens whose
// activations all equal x_value: each output must be exactly `expected`.
void expect_int8_kernels_give(MatrixRef w, float x_value, float expected, const std::string& what) {
  const int64_t rows = w.rows, cols = w.cols;
  for (KernelChoice choice : {KernelChoice::Scalar, KernelChoice::Avx2, KernelChoice::Avx512}) {
    if (choice == KernelChoice::Avx2 && !avx2_available()) continue;
    if (choice == KernelChoice::Avx512 && !avx512vl_available()) continue;
    const MatmulOptions options{ActivationPrecision::Q8, choice};
    const LargePageBytes packed = pack_rows_for(w, options);
    for (const void* rows_packed : {static_cast<const void*>(nullptr), static_cast<const void*>(packed.data())}) {
      if (rows_packed != nullptr && packed.empty()) continue;
      w.packed = rows_packed;
      for (int64_t n_tok : {1, 4}) {
        ThreadPool pool(1);
        const std::vector<float> x(static_cast<size_t>(n_tok * cols), x_value);
        std::vector<float> y = poisoned(rows * n_tok);
        matmul(w, x.data(), n_tok, y.data(), pool, options);
        for (int64_t i = 0; i < rows * n_tok; ++i)
          EXPECT_EQ(y[i], expected) << what << ", kernel " << static_cast<int>(choice) << (rows_packed ? " packed" : "")
                                    << ", tokens " << n_tok << ", output " << i;
      }
    }
  }
}

// The Q6_K int8 kernels sum two pieces' products in int16 before the scale: at the codes' and
// activations' limits (every code 63, every activation code -128, as Q8_K gives a block of equal
// values) a pair of pieces is -32256, inside int16; the outputs stay the exact integer dot (a wrap
// would be off by 65536 x the scale). Also codes 0 against the same activations, packed or not.
TEST(MatmulKernels, Q6KInt8SumsAtTheirLimitsStayExact) {
  constexpr int64_t rows = 16, cols = 2 * QK_K;
  for (uint8_t code_bits : {uint8_t{0xFF}, uint8_t{0x00}}) {
    std::vector<BlockQ6_K> blocks(rows * cols / QK_K);
    for (BlockQ6_K& b : blocks) {
      std::memset(b.ql, code_bits, sizeof b.ql);
      std::memset(b.qh, code_bits, sizeof b.qh);
      std::memset(b.scales, 127, sizeof b.scales);
      b.d = 0x3C00;  // 1.0 in f16
    }
    const MatrixRef w{DType::Q6_K, blocks.data(), rows, cols, cols / QK_K * sizeof(BlockQ6_K)};
    // code 63 is weight 31, code 0 weight -32; every activation code is -128 with d = 1/128
    expect_int8_kernels_give(w, -1.0f, 127.0f * (code_bits ? 31.0f : -32.0f) * -128.0f * cols / 128.0f,
                             "codes " + std::to_string(code_bits));
  }
}

// The Q4_K int8 kernels at their limits: every scale 63, codes 15 in the low nibbles, the high ones
// or both, every activation code -128. The VNNI build multiplies the high nibbles in place (16 x the
// code) and divides the int32 sums by 16 after; the outputs stay the exact dot, half for each nibble.
TEST(MatmulKernels, Q4KInt8SumsAtTheirLimitsStayExact) {
  constexpr int64_t rows = 16, cols = 2 * QK_K;
  for (uint8_t code_bits : {uint8_t{0xFF}, uint8_t{0x0F}, uint8_t{0xF0}}) {
    std::vector<BlockQ4_K> blocks(rows * cols / QK_K);
    for (BlockQ4_K& b : blocks) {
      std::memset(b.qs, code_bits, sizeof b.qs);
      std::memset(b.scales, 0xFF, sizeof b.scales);  // every sub-block's scale and min 63
      b.d = 0x3C00;                                   // 1.0 in f16
      b.dmin = 0;
    }
    const MatrixRef w{DType::Q4_K, blocks.data(), rows, cols, cols / QK_K * sizeof(BlockQ4_K)};
    // weight 63 * 15 where a code is 15, 0 elsewhere; every activation code -128 with d = 1/128
    expect_int8_kernels_give(w, -1.0f, -63.0f * 15.0f * (code_bits == 0xFF ? cols : cols / 2), "codes " + std::to_string(code_bits));
  }
}

// Q4_0 and Q4_1 likewise (their VNNI build also multiplies the high nibbles in place): codes 15 in
// the low nibbles, the high ones or both; Q4_0's weight is d (q - 8), Q4_1's d q + m with m = 0. Their
// activations (Q8_0, Q8_1: d = max |x| / 127) are -127/128, every code -127 with d = 1/128 exactly.
TEST(MatmulKernels, Q4_0AndQ4_1Int8SumsAtTheirLimitsStayExact) {
  constexpr int64_t rows = 16, cols = 256;
  const float x = -127.0f / 128.0f;
  for (uint8_t code_bits : {uint8_t{0xFF}, uint8_t{0x0F}, uint8_t{0xF0}}) {
    const float coded = code_bits == 0xFF ? cols : cols / 2;
    std::vector<BlockQ4_0> q4_0(rows * cols / QK4_0);
    for (BlockQ4_0& b : q4_0) {
      std::memset(b.qs, code_bits, sizeof b.qs);
      b.d = 0x3C00;  // 1.0 in f16
    }
    // a code 15 is weight 7, a code 0 weight -8
    expect_int8_kernels_give(MatrixRef{DType::Q4_0, q4_0.data(), rows, cols, cols / QK4_0 * sizeof(BlockQ4_0)}, x,
                             x * (7.0f * coded - 8.0f * (cols - coded)), "Q4_0 codes " + std::to_string(code_bits));
    std::vector<BlockQ4_1> q4_1(rows * cols / QK4_1);
    for (BlockQ4_1& b : q4_1) {
      std::memset(b.qs, code_bits, sizeof b.qs);
      b.d = 0x3C00;
      b.m = 0;
    }
    expect_int8_kernels_give(MatrixRef{DType::Q4_1, q4_1.data(), rows, cols, cols / QK4_1 * sizeof(BlockQ4_1)}, x,
                             x * 15.0f * coded, "Q4_1 codes " + std::to_string(code_bits));
  }
}

TEST(MatmulDispatch, ScalarAndAvx2AgreeClosely) {
  if (!avx2_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
  std::mt19937 rng(5);
  ThreadPool pool(2);
  for (ActivationPrecision p : {ActivationPrecision::F32, ActivationPrecision::Q8})
    for (DType t : kWeightTypes) {
      SCOPED_TRACE(std::string(dtype_name(t)) + (p == ActivationPrecision::F32 ? " f32act" : " q8act"));
      const int64_t cols = dtype_info(t).block_size == 256 ? 512 : 576;
      const Weights w = random_weights(t, 19, cols, rng);
      const std::vector<float> x = random_activations(5, cols, rng);
      std::vector<float> ys = poisoned(19 * 5), ya = poisoned(19 * 5);
      matmul(w.ref, x.data(), 5, ys.data(), pool, MatmulOptions{p, KernelChoice::Scalar});
      matmul(w.ref, x.data(), 5, ya.data(), pool, MatmulOptions{p, KernelChoice::Avx2});
      const Reference ref = reference(w.ref, x, 5);
      EXPECT_LT(nmse(ya, ref), nmse_bound(t, p));
      // the two families differ only in f32 rounding, plus the int8 kernels' f16 activation sums
      const double tol = p == ActivationPrecision::F32 ? 1e-5 : 1e-4;
      for (size_t i = 0; i < ys.size(); ++i)
        EXPECT_NEAR(ya[i], ys[i], tol * std::sqrt(ref.term_sq[i])) << "output " << i;
    }
}

// The AVX-512 builds of the packed-row kernels are the AVX2 builds' source with more registers (and,
// for int8, VNNI's four-product dot into int32): the same bits for every type and activation
// precision they cover, packed or not, every token count up to two 8-token strips and a partial one,
// and activations near the ends of f32's range.
TEST(MatmulDispatch, Avx512AndAvx2BuildsGiveTheSameBits) {
  if (!avx512vl_available()) GTEST_SKIP() << "CPU lacks AVX-512F/VL";
  std::mt19937 rng(31);
  ThreadPool pool(2);
  int checked = 0;
  for (ActivationPrecision p : {ActivationPrecision::F32, ActivationPrecision::Q8})
    for (DType t : kWeightTypes) {
      if (std::string(cpu::avx512_kernel(t, p)->name) == "avx2") continue;
      SCOPED_TRACE(std::string(dtype_name(t)) + (p == ActivationPrecision::F32 ? " f32act" : " q8act"));
      const int64_t rows = 21, cols = dtype_info(t).block_size == 256 ? 768 : 576;
      const Weights w = random_weights(t, rows, cols, rng);
      const MatmulOptions avx2{p, KernelChoice::Avx2}, avx512{p, KernelChoice::Avx512};
      const LargePageBytes packed = pack_rows_for(w.ref, avx512);
      ASSERT_EQ(packed, pack_rows_for(w.ref, avx2));
      MatrixRef with = w.ref;
      with.packed = packed.data();
      for (int64_t n_tok = 1; n_tok <= 17; ++n_tok) {
        std::vector<float> x = random_activations(n_tok, cols, rng);
        // the last token of a batch: activations whose scaled products leave f32's normal range (a
        // normal near the bottom, a subnormal) and a large one that keeps every output finite (int8
        // activations keep each block's scale as an f16)
        if (n_tok > 1) {
          float* last = x.data() + (n_tok - 1) * cols;
          last[0] = 1e-38f, last[1] = 2.5e-40f, last[cols - 1] = p == ActivationPrecision::F32 ? -3e28f : -6e4f;
        }
        for (const MatrixRef& m : {w.ref, with}) {
          std::vector<float> y2 = poisoned(static_cast<size_t>(rows * n_tok)), y5 = y2;
          matmul(m, x.data(), n_tok, y2.data(), pool, avx2);
          matmul(m, x.data(), n_tok, y5.data(), pool, avx512);
          for (float v : y2) ASSERT_TRUE(std::isfinite(v));  // equal bytes below mean equal results
          ASSERT_EQ(std::memcmp(y2.data(), y5.data(), y2.size() * sizeof(float)), 0)
              << n_tok << " tokens, " << (m.packed != nullptr ? "packed" : "file's rows");
        }
      }
      ++checked;
    }
  const int int8 = cpu_features().runs_avx512vnni_kernels() ? 5 : 0;
  EXPECT_EQ(checked, 8 + int8) << "f32: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K; q8 (with VNNI): Q4_0, Q4_1, Q8_0, Q4_K, Q6_K";
}

TEST(MatmulDispatch, DefaultIsF32ActivationsAndKeepsOutlierBlocksExact) {
  // one large activation per block: rounding to 8 bits wipes out the block's small ones, f32 keeps them
  std::mt19937 rng(17);
  ThreadPool pool(2);
  const int64_t rows = 16, cols = 256, n_tok = 3;
  const Weights w = random_weights(DType::Q4_1, rows, cols, rng);
  std::vector<float> x = random_activations(n_tok, cols, rng);
  for (size_t i = 0; i < x.size(); i += 32) x[i] = 1000.0f;
  const Reference ref = reference(w.ref, x, n_tok);

  std::vector<float> by_default = poisoned(rows * n_tok), f32 = poisoned(rows * n_tok), q8 = poisoned(rows * n_tok);
  matmul(w.ref, x.data(), n_tok, by_default.data(), pool);
  matmul(w.ref, x.data(), n_tok, f32.data(), pool, MatmulOptions{ActivationPrecision::F32});
  matmul(w.ref, x.data(), n_tok, q8.data(), pool, MatmulOptions{ActivationPrecision::Q8});
  EXPECT_EQ(std::memcmp(by_default.data(), f32.data(), f32.size() * sizeof(float)), 0);
  EXPECT_LT(max_rel_error(f32, ref), 1e-5);
  EXPECT_GT(max_rel_error(q8, ref), 1e-3);  // the int8 path really is coarser here
}

TEST(MatmulDispatch, FusedMixesWeightTypesAndActivationFormats) {
  // Q4_1, Q8_0 and Q4_K take three different int8 activation formats (Q8_1, Q8_0, Q8_K)
  std::mt19937 rng(23);
  ThreadPool pool(2);
  const int64_t cols = 512, n_tok = 3;
  const Weights ws[] = {random_weights(DType::Q4_1, 33, cols, rng), random_weights(DType::Q8_0, 7, cols, rng),
                        random_weights(DType::Q4_K, 40, cols, rng), random_weights(DType::F16, 3, cols, rng)};
  const std::vector<float> x = random_activations(n_tok, cols, rng);
  for (ActivationPrecision p : {ActivationPrecision::F32, ActivationPrecision::Q8}) {
    std::vector<std::vector<float>> fused, separate;
    std::vector<MatmulTarget> targets;
    for (const Weights& w : ws) {
      fused.push_back(poisoned(static_cast<size_t>(w.ref.rows * n_tok)));
      separate.push_back(poisoned(fused.back().size()));
      matmul(w.ref, x.data(), n_tok, separate.back().data(), pool, MatmulOptions{p});
    }
    for (size_t i = 0; i < std::size(ws); ++i) targets.push_back(MatmulTarget{ws[i].ref, fused[i].data()});
    matmul_fused(targets, x.data(), n_tok, pool, MatmulOptions{p});
    for (size_t i = 0; i < std::size(ws); ++i)
      EXPECT_EQ(std::memcmp(fused[i].data(), separate[i].data(), fused[i].size() * sizeof(float)), 0) << "matrix " << i;
  }
}

TEST(MatmulDispatch, FusedRejectsDifferentColumnCounts) {
  ThreadPool pool(1);
  std::vector<uint8_t> data(4096);
  std::vector<float> x(64, 1.0f), y(8);
  const MatmulTarget targets[] = {{MatrixRef{DType::Q4_1, data.data(), 1, 64, 40}, y.data()},
                                  {MatrixRef{DType::Q4_1, data.data(), 1, 32, 20}, y.data() + 4}};
  EXPECT_THROW(matmul_fused(targets, x.data(), 1, pool), std::invalid_argument);
}

TEST(MatmulDispatch, KernelNameFollowsCpu) {
  const char* family = use_avx2() ? "avx2" : "scalar";
  for (ActivationPrecision p : {ActivationPrecision::F32, ActivationPrecision::Q8}) {
    // the packed-row kernels have an AVX-512VL build, the int8 ones with VNNI where the CPU has it
    const bool vnni = cpu_features().runs_avx512vnni_kernels();
    const char* expected = !use_avx512vl()                 ? family
                           : p == ActivationPrecision::F32 ? "avx512vl"
                           : vnni                          ? "avx512vnni"
                                                           : family;
    EXPECT_STREQ(matmul_kernel_name(DType::Q4_1, p), expected);
    EXPECT_STREQ(matmul_kernel_name(DType::Q8_0, p), expected);
    EXPECT_STREQ(matmul_kernel_name(DType::Q6_K, p), expected);
    EXPECT_STREQ(matmul_kernel_name(DType::Q2_K, p), "none");
  }
  EXPECT_STREQ(matmul_kernel_name(DType::F16), family);
  EXPECT_STREQ(matmul_kernel_name(DType::Q5_0, ActivationPrecision::Q8), family);  // not packed: AVX2 only
}

TEST(MatmulDispatch, RejectsUnsupportedTypesAndPartialBlocks) {
  ThreadPool pool(1);
  std::vector<uint8_t> data(4096);
  std::vector<float> x(512, 1.0f), y(8);
  for (ActivationPrecision p : {ActivationPrecision::F32, ActivationPrecision::Q8}) {
    EXPECT_THROW(matmul(MatrixRef{DType::Q2_K, data.data(), 1, 256, 84}, x.data(), 1, y.data(), pool, {p}),
                 std::invalid_argument);
    EXPECT_THROW(matmul(MatrixRef{DType::Q4_1, data.data(), 1, 48, 40}, x.data(), 1, y.data(), pool, {p}),
                 std::invalid_argument);
  }
}

}  // namespace
}  // namespace inferscope
