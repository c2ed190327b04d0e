// The element-wise and row-wise ops against straightforward double-precision formulas.
#include "kernels/cpu/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/ops_kernels.h"
#include "kernels/cpu/matmul/vec_dot.h"

namespace inferscope {
namespace {

std::vector<float> random_vec(int64_t n, std::mt19937& rng, float sigma = 1.0f) {
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = normal(rng);
  return v;
}

// Every element within rel of the reference (relative to max(1, |ref|)); NaN never passes.
void expect_close(const std::vector<float>& got, const std::vector<double>& want, double rel) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::isfinite(got[i])) << "element " << i;
    EXPECT_LE(std::fabs(got[i] - want[i]), rel * std::fmax(1.0, std::fabs(want[i]))) << "element " << i;
  }
}

TEST(Ops, RmsnormMatchesFormulaAndMayAlias) {
  std::mt19937 rng(1);
  for (int64_t n : {1, 7, 576, 1000}) {
    const std::vector<float> x = random_vec(n, rng, 3.0f), w = random_vec(n, rng);
    const float eps = 1e-5f;
    double ss = 0.0;
    for (float v : x) ss += static_cast<double>(v) * v;
    const double scale = 1.0 / std::sqrt(ss / n + eps);
    std::vector<double> want(x.size());
    for (int64_t i = 0; i < n; ++i) want[i] = x[i] * scale * w[i];

    std::vector<float> out(x.size(), std::numeric_limits<float>::quiet_NaN());
    rmsnorm(out.data(), x.data(), w.data(), n, eps);
    // an f32 sum of n <= 1000 squares (sqrt(n) * 2^-24 = 1.9e-6, halved by the square root), two products
    expect_close(out, want, 1e-6);
    std::vector<float> in_place = x;
    rmsnorm(in_place.data(), in_place.data(), w.data(), n, eps);
    EXPECT_EQ(std::memcmp(in_place.data(), out.data(), out.size() * sizeof(float)), 0);
  }
}

// Rotates adjacent pairs (2i, 2i+1) for 2i < rope_dim by pos * scale * base^(-2i/rope_dim), in double.
std::vector<double> rope_formula(const std::vector<float>& head, int64_t rope_dim, int32_t pos, double base,
                                 double scale) {
  std::vector<double> out(head.begin(), head.end());
  for (int64_t i = 0; 2 * i < rope_dim; ++i) {
    const double theta = pos * scale * std::pow(base, -2.0 * i / rope_dim);
    out[2 * i] = head[2 * i] * std::cos(theta) - head[2 * i + 1] * std::sin(theta);
    out[2 * i + 1] = head[2 * i] * std::sin(theta) + head[2 * i + 1] * std::cos(theta);
  }
  return out;
}

TEST(Ops, RopeMatchesDoubleFormula) {
  std::mt19937 rng(2);
  struct Case {
    int64_t head_dim, rope_dim;
    int32_t pos;
    float base, scale;
  };
  for (const Case& c : {Case{64, 64, 0, 10000.0f, 1.0f}, Case{64, 64, 1, 10000.0f, 1.0f},
                        Case{64, 64, 4097, 100000.0f, 1.0f}, Case{128, 128, 777, 10000.0f, 0.25f},
                        Case{64, 32, 300, 10000.0f, 1.0f}, Case{80, 20, 12345, 500000.0f, 1.0f}}) {
    const std::vector<float> head = random_vec(c.head_dim, rng);
    std::vector<float> got = head;
    rope(got.data(), c.head_dim, c.rope_dim, c.pos, c.base, c.scale);
    // angles in double, cos and sin rounded once to f32, then two products and a sum: a few 2^-24 of |x|
    expect_close(got, rope_formula(head, c.rope_dim, c.pos, c.base, c.scale), 1e-5);
    // elements past rope_dim are left exactly as they were
    for (int64_t i = c.rope_dim; i < c.head_dim; ++i) EXPECT_EQ(got[i], head[i]);
  }
}

TEST(Ops, RopeHeadsAndPrecomputedAnglesEqualRopePerHead) {
  std::mt19937 rng(3);
  const int64_t n_heads = 9, head_dim = 64, rope_dim = 48;
  const std::vector<float> heads = random_vec(n_heads * head_dim, rng);
  std::vector<float> together = heads, apart = heads, split = heads;
  rope_heads(together.data(), n_heads, head_dim, rope_dim, 1234, 10000.0f, 1.0f);
  for (int64_t h = 0; h < n_heads; ++h) rope(apart.data() + h * head_dim, head_dim, rope_dim, 1234, 10000.0f, 1.0f);
  std::vector<float> cos_v(rope_dim / 2), sin_v(rope_dim / 2);
  rope_cos_sin(cos_v.data(), sin_v.data(), rope_dim, 1234, 10000.0f, 1.0f);
  rope_apply(split.data(), n_heads, head_dim, rope_dim, cos_v.data(), sin_v.data());
  EXPECT_EQ(std::memcmp(together.data(), apart.data(), heads.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(split.data(), apart.data(), heads.size() * sizeof(float)), 0);
  EXPECT_NE(std::memcmp(split.data(), heads.data(), heads.size() * sizeof(float)), 0);
}

// NEOX pairs (i, i + rope_dim/2) with Llama 3.1-style frequency factors, against the double formula
// written out per pair; dimensions past rope_dim are untouched.
TEST(Ops, RopeNeoxPairsWithFrequencyFactorsMatchDoubleFormula) {
  std::mt19937 rng(4);
  const int64_t n_heads = 3, head_dim = 64, rope_dim = 48, half = rope_dim / 2;
  const int32_t pos = 2049;
  const double base = 500000.0;
  const std::vector<float> heads = random_vec(n_heads * head_dim, rng);
  std::vector<float> factors(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) factors[static_cast<size_t>(i)] = 1.0f + 0.375f * static_cast<float>(i % 9);
  std::vector<float> cos_v(half), sin_v(half), got = heads;
  rope_cos_sin(cos_v.data(), sin_v.data(), rope_dim, pos, static_cast<float>(base), 1.0f, factors.data());
  rope_apply(got.data(), n_heads, head_dim, rope_dim, cos_v.data(), sin_v.data(), RopePairing::Neox);
  std::vector<double> want(heads.begin(), heads.end());
  for (int64_t h = 0; h < n_heads; ++h) {
    double* x = want.data() + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const double theta = pos * std::pow(base, -2.0 * i / rope_dim) / factors[static_cast<size_t>(i)];
      const double a = x[i], b = x[i + half];
      x[i] = a * std::cos(theta) - b * std::sin(theta);
      x[i + half] = a * std::sin(theta) + b * std::cos(theta);
    }
  }
  // as RopeMatchesDoubleFormula: cos and sin rounded once to f32, then two products and a sum
  expect_close(got, want, 1e-5);
  for (int64_t h = 0; h < n_heads; ++h) {
    for (int64_t i = rope_dim; i < head_dim; ++i) EXPECT_EQ(got[h * head_dim + i], heads[h * head_dim + i]);
  }
  // factors of 1 are no factors, bit for bit
  std::vector<float> ones(static_cast<size_t>(half), 1.0f), cos_1(half), sin_1(half);
  rope_cos_sin(cos_1.data(), sin_1.data(), rope_dim, pos, static_cast<float>(base), 1.0f, ones.data());
  rope_cos_sin(cos_v.data(), sin_v.data(), rope_dim, pos, static_cast<float>(base), 1.0f);
  EXPECT_EQ(cos_1, cos_v);
  EXPECT_EQ(sin_1, sin_v);
}

// YaRN: pairs below corr_low keep the original angle, pairs above corr_high take the interpolated one
// (angle x freq_scale), pairs between blend linearly in the pair index; cos and sin carry mscale.
TEST(Ops, RopeYarnBlendsOriginalAndInterpolatedAngles) {
  const int64_t rope_dim = 32, half = rope_dim / 2;
  const int32_t pos = 777;
  const double base = 10000.0, scale = 0.125;
  const RopeYarn yarn = rope_yarn(rope_dim, static_cast<float>(base), static_cast<float>(scale), 2048, 1.0f);
  // pair i turns 2048 / (2 pi 10000^(i/16)) times over 2048 positions: 32 times at i = 4.03 (floor 4),
  // once at i = 10.05 (ceil 11)
  EXPECT_EQ(yarn.corr_low, 4.0f);
  EXPECT_EQ(yarn.corr_high, 11.0f);
  EXPECT_FLOAT_EQ(yarn.mscale, 1.0f + 0.1f * std::log(8.0f));
  std::vector<float> cos_v(half), sin_v(half);
  rope_cos_sin(cos_v.data(), sin_v.data(), rope_dim, pos, static_cast<float>(base), static_cast<float>(scale), nullptr,
               &yarn);
  for (int64_t i = 0; i < half; ++i) {
    const double original = pos * std::pow(base, -2.0 * i / rope_dim);
    const double keep = i <= 4 ? 1.0 : i >= 11 ? 0.0 : 1.0 - (i - 4.0) / 7.0;
    const double theta = original * (keep + (1.0 - keep) * scale);
    EXPECT_NEAR(cos_v[static_cast<size_t>(i)], yarn.mscale * std::cos(theta), 1e-6) << "pair " << i;
    EXPECT_NEAR(sin_v[static_cast<size_t>(i)], yarn.mscale * std::sin(theta), 1e-6) << "pair " << i;
  }
  // not stretched (scale 1): no magnitude, nothing to blend
  EXPECT_EQ(rope_yarn(rope_dim, 10000.0f, 1.0f, 2048, 1.0f).mscale, 1.0f);
}

// The exp-heavy ops in each family: the public entry point and the two families it chooses from.
struct ExpOps {
  const char* name;
  void (*softmax)(float*, int64_t);
  void (*swiglu)(float*, const float*, int64_t);
  void (*geglu)(float*, const float*, int64_t);
};

class ExpOpsTest : public ::testing::TestWithParam<ExpOps> {
 protected:
  void SetUp() override {
    if (std::string(GetParam().name) == "avx2" && !cpu_features().runs_avx2_kernels()) GTEST_SKIP() << "no AVX2/FMA/F16C";
  }
};

TEST_P(ExpOpsTest, SoftmaxIsStableAndMatchesFormula) {
  std::mt19937 rng(4);
  for (int64_t n : {1, 5, 8, 13, 300}) {
    for (float shift : {0.0f, 1000.0f, -1000.0f}) {  // large logits must not overflow exp
      std::vector<float> x = random_vec(n, rng, 30.0f);  // spreads of 100+: tiny terms too
      for (float& v : x) v += shift;
      double max = -INFINITY, sum = 0.0;
      for (float v : x) max = std::fmax(max, v);
      for (float v : x) sum += std::exp(static_cast<double>(v) - max);
      std::vector<double> want(x.size());
      for (int64_t i = 0; i < n; ++i) want[i] = std::exp(static_cast<double>(x[i]) - max) / sum;
      GetParam().softmax(x.data(), n);
      // probabilities (<= 1): f32 exps within a few 2^-24, summed over n <= 300 (sqrt(300) * 2^-24 = 1e-6)
      expect_close(x, want, 1e-6);
    }
  }
}

TEST_P(ExpOpsTest, SoftmaxPropagatesNaN) {
  for (int64_t n : {3, 11}) {
    std::vector<float> x(static_cast<size_t>(n), 1.0f);
    x[1] = std::numeric_limits<float>::quiet_NaN();
    GetParam().softmax(x.data(), n);
    for (float v : x) EXPECT_TRUE(std::isnan(v));
  }
}

TEST_P(ExpOpsTest, SwigluMatchesFormulaOverTheWholeRange) {
  std::mt19937 rng(5);
  for (int64_t n : {1, 7, 1536}) {
    std::vector<float> gate = random_vec(n, rng, 4.0f);
    const std::vector<float> up = random_vec(n, rng);
    // extremes: exp(-g) overflows, underflows, and lands near the f32 limits
    const float extremes[] = {-100.0f, -88.5f, -87.0f, -20.0f, 20.0f, 87.0f, 88.5f, 100.0f};
    for (size_t i = 0; i < gate.size() && i < std::size(extremes); ++i) gate[i] = extremes[i];
    std::vector<double> want(gate.size());
    for (size_t i = 0; i < gate.size(); ++i)
      want[i] = gate[i] / (1.0 + std::exp(-static_cast<double>(gate[i]))) * up[i];
    GetParam().swiglu(gate.data(), up.data(), n);
    // one f32 exp, a division and two products: a few 2^-24, relative
    expect_close(gate, want, 1e-6);
  }
  std::vector<float> nan_gate = {std::numeric_limits<float>::quiet_NaN()}, one = {1.0f};
  GetParam().swiglu(nan_gate.data(), one.data(), 1);
  EXPECT_TRUE(std::isnan(nan_gate[0]));
}

// Gemma's gated GELU (tanh approximation) against the formula in double, over the range where tanh
// saturates too (the AVX2 family computes it as g / (1 + e^-2u), the scalar one with tanh).
TEST_P(ExpOpsTest, GegluMatchesTanhGeluFormula) {
  std::mt19937 rng(6);
  for (int64_t n : {1, 9, 2048}) {
    std::vector<float> gate = random_vec(n, rng, 6.0f);
    const std::vector<float> up = random_vec(n, rng);
    const float extremes[] = {-50.0f, -10.0f, -3.0f, 0.0f, 3.0f, 10.0f, 50.0f};
    for (size_t i = 0; i < gate.size() && i < std::size(extremes); ++i) gate[i] = extremes[i];
    std::vector<double> want(gate.size());
    for (size_t i = 0; i < gate.size(); ++i) {
      const double x = gate[i];
      want[i] = 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))) * up[i];
    }
    GetParam().geglu(gate.data(), up.data(), n);
    // f32 tanh and a few products: a few 2^-24 of max(1, |x|) (1 + tanh cancels for negative x, but
    // the product with x stays within that of the absolute value)
    expect_close(gate, want, 1e-6);
  }
  std::vector<float> nan_gate = {std::numeric_limits<float>::quiet_NaN()}, one = {1.0f};
  GetParam().geglu(nan_gate.data(), one.data(), 1);
  EXPECT_TRUE(std::isnan(nan_gate[0]));
}

INSTANTIATE_TEST_SUITE_P(Families, ExpOpsTest,
                         ::testing::Values(ExpOps{"public", softmax, swiglu, geglu},
                                           ExpOps{"scalar", cpu::softmax_scalar, cpu::swiglu_scalar, cpu::geglu_scalar},
                                           ExpOps{"avx2", cpu::softmax_avx2, cpu::swiglu_avx2, cpu::geglu_avx2}),
                         [](const ::testing::TestParamInfo<ExpOps>& p) { return std::string(p.param.name); });

TEST(Ops, AddInplaceAdds) {
  std::mt19937 rng(6);
  std::vector<float> y = random_vec(33, rng);
  const std::vector<float> x = random_vec(33, rng);
  std::vector<double> want(y.size());
  for (size_t i = 0; i < y.size(); ++i) want[i] = static_cast<double>(y[i] + x[i]);
  add_inplace(y.data(), x.data(), 33);
  expect_close(y, want, 0.0);
}

TEST(Ops, DotF32MatchesDoubleAndIsRepeatable) {
  std::mt19937 rng(7);
  for (int64_t n : {1, 7, 8, 31, 33, 64, 1000}) {
    const std::vector<float> a = random_vec(n, rng), b = random_vec(n, rng);
    double want = 0.0, mag = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      want += static_cast<double>(a[i]) * b[i];
      mag += std::fabs(static_cast<double>(a[i]) * b[i]);
    }
    const float got = dot_f32(a.data(), b.data(), n);
    // of sum |a_i b_i|: sqrt(n) * 2^-24 is 1.9e-6 for one running sum of n = 1000; the kernels'
    // several accumulators each sum fewer terms
    EXPECT_NEAR(got, want, 1e-6 * mag) << "n " << n;
    const float again = dot_f32(a.data(), b.data(), n);
    EXPECT_EQ(std::memcmp(&got, &again, sizeof got), 0);
    // both kernel families agree with the double sum as well
    EXPECT_NEAR(cpu::scalar_kernel(DType::F32, ActivationPrecision::F32)->dot(a.data(), b.data(), n), want, 1e-6 * mag);
    if (cpu_features().runs_avx2_kernels()) {
      EXPECT_NEAR(cpu::avx2_kernel(DType::F32, ActivationPrecision::F32)->dot(a.data(), b.data(), n), want, 1e-6 * mag);
    }
  }
}

}  // namespace
}  // namespace inferscope
