// The CUDA kernels' host-device element maths (kernels/cuda/*_element.h), compiled here as plain C++,
// against the CPU kernels they must reproduce. Every comparison is bitwise: each function performs the
// CPU scalar path's operations in the CPU's order (the GPU build keeps that order with --fmad=false;
// tests/backend_ops/test_cuda_ops.cpp checks the GPU side where a device exists).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <vector>

#include "core/sample/sampler.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/ops_kernels.h"
#include "kernels/format/quant_blocks.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cuda/dequant_element.h"
#include "kernels/cuda/kv_store_element.h"
#include "kernels/cuda/ops_element.h"
#include "kernels/cuda/q8_dot_element.h"
#include "tests/support/gemv_q8_reference.h"
#include "tests/support/quant_error.h"

namespace inferscope {
namespace {

uint32_t bits_of(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

std::vector<float> random_floats(size_t n, std::mt19937& rng, float sigma) {
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

TEST(CudaElementMath, F16ToF32MatchesCpuForEveryHalf) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const auto half = static_cast<uint16_t>(h);
    ASSERT_EQ(bits_of(gpu::f16_to_f32(half)), bits_of(fp16_to_f32(half))) << "half 0x" << std::hex << h;
  }
}

// n blocks of random bytes (any scale: subnormal, inf and NaN included) decode as dequantize_row does.
template <typename Block, typename Decode>
void expect_blocks_decode_as_cpu(DType type, Decode decode) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  constexpr int kBlocks = 4096, kPerBlock = 32;
  std::vector<Block> blocks(kBlocks);
  auto* raw = reinterpret_cast<uint8_t*>(blocks.data());
  for (size_t i = 0; i < blocks.size() * sizeof(Block); ++i) raw[i] = static_cast<uint8_t>(byte(rng));
  std::vector<float> want(kBlocks * kPerBlock);
  dequantize_row(type, blocks.data(), want.data(), static_cast<int64_t>(want.size()));
  for (int b = 0; b < kBlocks; ++b)
    for (int i = 0; i < kPerBlock; ++i)
      ASSERT_EQ(bits_of(decode(blocks[b], i)), bits_of(want[b * kPerBlock + i])) << "block " << b << " element " << i;
}

TEST(CudaElementMath, F32ToF16MatchesCpuAcrossTheFloats) {
  // every 65537th bit pattern (all exponents, signs, NaNs), and each half's value with its neighbours
  // (the rounding ties and carries)
  for (uint64_t x = 0; x <= 0xffffffffu; x += 65537) {
    const auto u = static_cast<uint32_t>(x);
    ASSERT_EQ(gpu::f32_to_f16(u), f32_to_fp16(std::bit_cast<float>(u))) << "f32 bits 0x" << std::hex << u;
  }
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint32_t u = bits_of(fp16_to_f32(static_cast<uint16_t>(h)));
    for (uint32_t d : {u - 1, u, u + 1, u + 0x1000u, u - 0x1000u}) {
      ASSERT_EQ(gpu::f32_to_f16(d), f32_to_fp16(std::bit_cast<float>(d))) << "f32 bits 0x" << std::hex << d;
    }
  }
}

TEST(CudaElementMath, Q4_0ElementsMatchCpuDequantizer) {
  expect_blocks_decode_as_cpu<BlockQ4_0>(DType::Q4_0, [](const BlockQ4_0& b, int i) { return gpu::q4_0_element(b, i); });
}

TEST(CudaElementMath, Q4_1ElementsMatchCpuDequantizer) {
  expect_blocks_decode_as_cpu<BlockQ4_1>(DType::Q4_1, [](const BlockQ4_1& b, int i) { return gpu::q4_1_element(b, i); });
}

TEST(CudaElementMath, Q8_0ElementsMatchCpuDequantizer) {
  expect_blocks_decode_as_cpu<BlockQ8_0>(DType::Q8_0, [](const BlockQ8_0& b, int i) { return gpu::q8_0_element(b, i); });
}

// The GEMV's quarter-block view of a Q4 block names each of its 32 elements once, with its nibble.
TEST(CudaElementMath, Q4QuartersCoverEachElementOnceWithItsNibble) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> byte(0, 255);
  uint8_t qs[QK4_0 / 2];
  for (uint8_t& b : qs) b = static_cast<uint8_t>(byte(rng));
  std::set<int> seen;
  for (int quarter = 0; quarter < 4; ++quarter) {
    const uint32_t bytes = qs[4 * quarter] | (qs[4 * quarter + 1] << 8) | (qs[4 * quarter + 2] << 16) |
                           (static_cast<uint32_t>(qs[4 * quarter + 3]) << 24);
    for (int k = 0; k < 8; ++k) {
      const int column = gpu::q4_quarter_column(quarter, k);
      EXPECT_TRUE(seen.insert(column).second) << "column " << column << " twice";
      EXPECT_EQ(gpu::q4_quarter_nibble(bytes, k), gpu::q4_nibble(qs, column)) << "quarter " << quarter << " k " << k;
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(QK4_0));
}

// With the row's double sum of squares (the GPU sums in another order, see test_cuda_ops), the scale
// and every element are the CPU's.
TEST(CudaElementMath, RmsnormScaleAndElementsMatchCpu) {
  std::mt19937 rng(11);
  for (int64_t n : {1, 7, 576, 4096}) {
    const std::vector<float> x = random_floats(static_cast<size_t>(n), rng, 3.0f), w = random_floats(x.size(), rng, 1.0f);
    std::vector<float> want(x.size());
    rmsnorm(want.data(), x.data(), w.data(), n, 1e-5f);
    double sum_sq = 0.0;
    for (float v : x) sum_sq += static_cast<double>(v) * v;
    const float scale = gpu::rmsnorm_scale(sum_sq, n, 1e-5f);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(bits_of(gpu::rmsnorm_value(x[i], scale, w[i])), bits_of(want[i])) << "n " << n << " element " << i;
  }
}

struct RopeCase {
  int64_t rope_dim;
  float base, scale;
  bool factors, yarn;
};

TEST(CudaElementMath, RopeAnglesMatchCpuCosSin) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> factor(1.0f, 8.0f);
  const RopeCase cases[] = {{64, 10000.0f, 1.0f, false, false}, {128, 500000.0f, 1.0f, true, false},
                            {128, 1000000.0f, 0.25f, false, true}, {32, 10000.0f, 0.5f, true, true}};
  for (const RopeCase& rc : cases) {
    const int64_t n_pairs = rc.rope_dim / 2;
    std::vector<float> factors(static_cast<size_t>(n_pairs));
    for (float& f : factors) f = factor(rng);
    const RopeYarn yarn = rope_yarn(rc.rope_dim, rc.base, rc.scale, 4096);
    const double step = gpu::rope_freq_step(rc.base, rc.rope_dim);
    for (int32_t pos : {0, 1, 17, 4095, 131071}) {
      std::vector<float> cos_want(n_pairs), sin_want(n_pairs);
      rope_cos_sin(cos_want.data(), sin_want.data(), rc.rope_dim, pos, rc.base, rc.scale,
                   rc.factors ? factors.data() : nullptr, rc.yarn ? &yarn : nullptr);
      for (int64_t i = 0; i < n_pairs; ++i) {
        float c = 0.0f, s = 0.0f;
        gpu::rope_pair_cos_sin(i, gpu::rope_pair_freq(i, step), pos, rc.scale, rc.factors ? factors[i] : 1.0,
                               rc.yarn ? &yarn : nullptr, c, s);
        ASSERT_EQ(bits_of(c), bits_of(cos_want[i])) << "rope_dim " << rc.rope_dim << " pos " << pos << " pair " << i;
        ASSERT_EQ(bits_of(s), bits_of(sin_want[i])) << "rope_dim " << rc.rope_dim << " pos " << pos << " pair " << i;
      }
    }
  }
}

TEST(CudaElementMath, RopeRotationMatchesCpuForBothPairings) {
  std::mt19937 rng(9);
  constexpr int64_t kHeads = 3, kHeadDim = 128;
  for (int64_t rope_dim : {int64_t{128}, int64_t{64}}) {
    for (RopePairing pairing : {RopePairing::Adjacent, RopePairing::Neox}) {
      const int64_t n_pairs = rope_dim / 2;
      const std::vector<float> heads = random_floats(kHeads * kHeadDim, rng, 2.0f);
      std::vector<float> cos_v(n_pairs), sin_v(n_pairs);
      rope_cos_sin(cos_v.data(), sin_v.data(), rope_dim, 321, 10000.0f, 1.0f);
      std::vector<float> want = heads, got = heads;
      rope_apply(want.data(), kHeads, kHeadDim, rope_dim, cos_v.data(), sin_v.data(), pairing);
      const bool neox = pairing == RopePairing::Neox;
      for (int64_t h = 0; h < kHeads; ++h) {
        for (int64_t i = 0; i < n_pairs; ++i) {
          float* first = got.data() + h * kHeadDim + gpu::rope_pair_first(i, neox);
          gpu::rope_rotate(first[0], first[gpu::rope_pair_stride(n_pairs, neox)], cos_v[i], sin_v[i]);
        }
      }
      for (size_t e = 0; e < got.size(); ++e)
        ASSERT_EQ(bits_of(got[e]), bits_of(want[e])) << "rope_dim " << rope_dim << " neox " << neox << " element " << e;
    }
  }
}

TEST(CudaElementMath, SwigluMatchesCpuScalar) {
  std::mt19937 rng(13);
  std::vector<float> gate = random_floats(100000, rng, 6.0f);
  const std::vector<float> up = random_floats(gate.size(), rng, 2.0f);
  std::vector<float> want = gate;
  cpu::swiglu_scalar(want.data(), up.data(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < gate.size(); ++i)
    ASSERT_EQ(bits_of(gpu::swiglu_value(gate[i], up[i])), bits_of(want[i])) << "element " << i;
}

// argmax_prefers folded in any order: sequentially, as a pairwise tree, and from the end.
int64_t fold_sequential(std::span<const float> v) {
  int64_t best = 0;
  for (int64_t i = 1; i < static_cast<int64_t>(v.size()); ++i)
    if (gpu::argmax_prefers(v[i], i, v[best], best)) best = i;
  return best;
}
int64_t fold_tree(std::span<const float> v, int64_t lo, int64_t hi) {
  if (hi - lo == 1) return lo;
  const int64_t mid = (lo + hi) / 2, a = fold_tree(v, lo, mid), b = fold_tree(v, mid, hi);
  return gpu::argmax_prefers(v[a], a, v[b], b) ? a : b;
}
int64_t fold_reversed(std::span<const float> v) {
  int64_t best = static_cast<int64_t>(v.size()) - 1;
  for (int64_t i = best - 1; i >= 0; --i)
    if (gpu::argmax_prefers(v[i], i, v[best], best)) best = i;
  return best;
}

TEST(CudaElementMath, ArgmaxOrderMatchesSamplerInAnyReductionOrder) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<std::vector<float>> rows = {{1.0f}, {nan}, {nan, nan, nan}, {nan, 2.0f, nan, 2.0f}, {-0.0f, 0.0f},
                                          {0.0f, -0.0f}, {3.0f, nan, 3.0f}, {-inf, -inf}, {1.0f, inf, nan, inf}};
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> small(-3, 3), kind(0, 19);
  for (int r = 0; r < 200; ++r) {
    // few distinct values, so ties are common; a NaN now and then
    std::vector<float> row(1 + r % 37);
    for (float& v : row) v = kind(rng) == 0 ? nan : static_cast<float>(small(rng));
    rows.push_back(row);
  }
  for (const std::vector<float>& row : rows) {
    const auto want = static_cast<int64_t>(argmax(row));
    EXPECT_EQ(fold_sequential(row), want);
    EXPECT_EQ(fold_tree(row, 0, static_cast<int64_t>(row.size())), want);
    EXPECT_EQ(fold_reversed(row), want);
  }
}

// The int8-activation GEMV's codes are the CPU's Q8_1 codes: a block's scale is amax / 127 (its half
// the CPU's), each code round(x / d), for gaussian blocks, a block of zeros and blocks of ties.
TEST(CudaElementMath, Q8CodesAreTheCpuQ8_1Codes) {
  std::vector<float> x = test::gaussian_row(64 * gpu::kQ8Block, 31);
  std::fill_n(x.begin(), gpu::kQ8Block, 0.0f);
  for (int j = 0; j < gpu::kQ8Block; ++j) x[gpu::kQ8Block + j] = static_cast<float>(j - 16) * 0.5f;  // x / d hits .5
  std::vector<BlockQ8_1> want(x.size() / gpu::kQ8Block);
  quantize_row(DType::Q8_1, x.data(), want.data(), static_cast<int64_t>(x.size()));
  for (size_t b = 0; b < want.size(); ++b) {
    float amax = 0.0f;
    for (int j = 0; j < gpu::kQ8Block; ++j) amax = std::fmax(amax, std::fabs(x[b * gpu::kQ8Block + j]));
    const float d = amax / 127.0f;
    ASSERT_EQ(gpu::f32_to_f16(bits_of(d)), want[b].d) << "block " << b;
    for (int j = 0; j < gpu::kQ8Block; ++j) {
      ASSERT_EQ(gpu::q8_code(x[b * gpu::kQ8Block + j], d != 0.0f ? 1.0f / d : 0.0f), want[b].qs[j])
          << "block " << b << " element " << j;
    }
  }
}

// A weight block meets an activation block in exact integers: the code words' dot products equal the
// codes' products summed one by one, and the float product is within rounding of the dequantized dot.
TEST(CudaElementMath, Q8BlockDotsAreExact) {
  constexpr int64_t kBlocks = 64, kCols = kBlocks * gpu::kQ8Block;
  const std::vector<float> xf = test::gaussian_row(kCols, 41);
  const test::Q8Rows xq = test::quantize_q8_rows(xf.data(), 1, kCols);
  for (DType type : {DType::Q8_0, DType::Q4_0, DType::Q4_1}) {
    const std::vector<float> wf = test::gaussian_row(kCols, 43);
    std::vector<uint8_t> row(row_bytes(type, kCols));
    quantize_row(type, wf.data(), row.data(), kCols);
    std::vector<float> w(kCols);
    dequantize_row(type, row.data(), w.data(), kCols);
    for (int64_t b = 0; b < kBlocks; ++b) {
      const float dx = gpu::f16_to_f32(xq.scales[b].d);
      // Q4_1's two terms (codes, offset) can cancel: each is within sum (|w| + 2 |m|) |dx q| of zero
      const double m = type == DType::Q4_1 ? gpu::f16_to_f32(reinterpret_cast<const BlockQ4_1*>(row.data())[b].m) : 0.0;
      double want = 0.0, magnitude = 0.0;
      for (int j = 0; j < gpu::kQ8Block; ++j) {
        const double wj = w[b * gpu::kQ8Block + j], xj = static_cast<double>(dx) * xq.codes[b * gpu::kQ8Block + j];
        want += wj * xj;
        magnitude += (std::fabs(wj) + 2 * std::fabs(m)) * std::fabs(xj);
      }
      const float got = test::q8_block_product(type, row.data(), xq, 0, b);
      // at most four roundings, each within 2^-24 of the magnitude
      EXPECT_LE(std::fabs(got - want), 4 * 0x1p-24 * magnitude) << dtype_name(type) << " block " << b;
    }
  }
  // the words: nibble k of the low and high halves in the activations' element order
  uint32_t packed[4] = {0x76543210u, 0xfedcba98u, 0x0f1e2d3cu, 0x4b5a6978u};
  int32_t codes[gpu::kQ8Words];
  gpu::q4_code_words(packed, codes);
  uint8_t bytes[16];
  std::memcpy(bytes, packed, sizeof bytes);
  int32_t ones[gpu::kQ8Words];
  for (int32_t& v : ones) v = 0x01010101;
  int plain = 0;
  for (int i = 0; i < QK4_0; ++i) plain += gpu::q4_nibble(bytes, i);
  EXPECT_EQ(gpu::block_dot(codes, ones), plain);
  for (int i = 0; i < QK4_0; ++i) {
    int32_t one_hot[gpu::kQ8Words] = {};
    one_hot[i / 4] = static_cast<int32_t>(1u << (8 * (i % 4)));
    EXPECT_EQ(gpu::block_dot(codes, one_hot), gpu::q4_nibble(bytes, i)) << "element " << i;
  }
  // signed bytes: -128 x 127 four times
  int32_t lows[gpu::kQ8Words] = {}, highs[gpu::kQ8Words] = {};
  lows[0] = static_cast<int32_t>(0x80808080u);
  highs[0] = 0x7f7f7f7f;
  EXPECT_EQ(gpu::block_dot(lows, highs), -4 * 128 * 127);
}

// The kernel's order in plain C++ lands within int8 activations' error of the exact product.
TEST(CudaElementMath, Q8GemvReferenceIsCloseToTheExactProduct) {
  constexpr int64_t kRows = 37, kCols = 4096, kTokens = 3;
  const std::vector<float> x = test::gaussian_row(kTokens * kCols, 53);
  const test::Q8Rows xq = test::quantize_q8_rows(x.data(), kTokens, kCols);
  for (DType type : {DType::Q8_0, DType::Q4_0, DType::Q4_1}) {
    const size_t stride = row_bytes(type, kCols);
    std::vector<uint8_t> bytes(stride * kRows);
    for (int64_t r = 0; r < kRows; ++r) {
      const std::vector<float> values = test::gaussian_row(kCols, 60 + static_cast<uint32_t>(r));
      quantize_row(type, values.data(), bytes.data() + r * stride, kCols);
    }
    const MatrixRef w{type, bytes.data(), kRows, kCols, stride};
    std::vector<float> want(kTokens * kRows);
    matmul_reference(w, x.data(), kTokens, want.data());
    const std::vector<float> got = test::gemv_q8_reference(w, xq);
    double err = 0.0, ref = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
      err += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
      ref += static_cast<double>(want[i]) * want[i];
    }
    // int8 activations: a relative rounding of about 1/254 per element, averaging out over a dot
    EXPECT_LE(err / ref, 1e-4) << dtype_name(type);
    EXPECT_GT(err / ref, 0.0) << dtype_name(type) << ": the activations were not quantized";
  }
}

}  // namespace
}  // namespace inferscope
