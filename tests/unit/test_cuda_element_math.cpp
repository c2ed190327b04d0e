// The CUDA kernels' host-device element maths (kernels/cuda/*_element.h), compiled here as plain C++,
// against the CPU kernels they must reproduce. Every comparison is bitwise: each function performs the
// CPU scalar path's operations in the CPU's order (the GPU build keeps that order with --fmad=false;
// tests/backend_ops/test_cuda_ops.cpp checks the GPU side where a device exists).
#include <gtest/gtest.h>

#include <bit>
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

}  // namespace
}  // namespace inferscope
