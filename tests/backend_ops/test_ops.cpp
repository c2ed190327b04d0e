// The element-wise and row-wise ops against straightforward double-precision formulas.
#include "kernels/cpu/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/vec_dot.h"

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
    expect_close(got, rope_formula(head, c.rope_dim, c.pos, c.base, c.scale), 1e-5);
    // elements past rope_dim are left exactly as they were
    for (int64_t i = c.rope_dim; i < c.head_dim; ++i) EXPECT_EQ(got[i], head[i]);
  }
}

TEST(Ops, RopeHeadsEqualsRopePerHead) {
  std::mt19937 rng(3);
  const int64_t n_heads = 9, head_dim = 64;
  const std::vector<float> heads = random_vec(n_heads * head_dim, rng);
  std::vector<float> together = heads, apart = heads;
  rope_heads(together.data(), n_heads, head_dim, 48, 1234, 10000.0f, 1.0f);
  for (int64_t h = 0; h < n_heads; ++h) rope(apart.data() + h * head_dim, head_dim, 48, 1234, 10000.0f, 1.0f);
  EXPECT_EQ(std::memcmp(together.data(), apart.data(), heads.size() * sizeof(float)), 0);
}

TEST(Ops, SoftmaxIsStableAndMatchesFormula) {
  std::mt19937 rng(4);
  for (int64_t n : {1, 5, 300}) {
    for (float shift : {0.0f, 1000.0f, -1000.0f}) {  // large logits must not overflow exp
      std::vector<float> x = random_vec(n, rng, 4.0f);
      for (float& v : x) v += shift;
      double max = -INFINITY, sum = 0.0;
      for (float v : x) max = std::fmax(max, v);
      for (float v : x) sum += std::exp(static_cast<double>(v) - max);
      std::vector<double> want(x.size());
      for (int64_t i = 0; i < n; ++i) want[i] = std::exp(static_cast<double>(x[i]) - max) / sum;
      softmax(x.data(), n);
      expect_close(x, want, 1e-5);
    }
  }
}

TEST(Ops, SoftmaxPropagatesNaN) {
  std::vector<float> x = {1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f};
  softmax(x.data(), 3);
  for (float v : x) EXPECT_TRUE(std::isnan(v));
}

TEST(Ops, SwigluMatchesFormula) {
  std::mt19937 rng(5);
  std::vector<float> gate = random_vec(1536, rng, 4.0f);
  const std::vector<float> up = random_vec(1536, rng);
  std::vector<double> want(gate.size());
  for (size_t i = 0; i < gate.size(); ++i) want[i] = gate[i] / (1.0 + std::exp(-static_cast<double>(gate[i]))) * up[i];
  swiglu(gate.data(), up.data(), 1536);
  expect_close(gate, want, 1e-6);
}

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
    EXPECT_NEAR(got, want, 1e-6 * mag) << "n " << n;
    const float again = dot_f32(a.data(), b.data(), n);
    EXPECT_EQ(std::memcmp(&got, &again, sizeof got), 0);
    // both kernel families agree with the double sum as well
    EXPECT_NEAR(cpu::scalar_kernel(DType::F32)->dot(a.data(), b.data(), n), want, 1e-6 * mag);
    const CpuFeatures& f = cpu_features();
    if (f.avx2 && f.fma && f.f16c) {
      EXPECT_NEAR(cpu::avx2_kernel(DType::F32)->dot(a.data(), b.data(), n), want, 1e-6 * mag);
    }
  }
}

}  // namespace
}  // namespace inferscope
