// The online-softmax arithmetic the CUDA attention kernels run (kernels/cuda/softmax_math.h), on the
// CPU: one pass over random scores against the two-pass softmax-weighted sum in double, split-K
// merging against the unsplit pass, the fold order the merge kernel relies on, masked scores and
// empty splits, and agreement with the CPU FlashAttention row update (core/attention).
//
// Tolerance: every output element is a convex combination of value elements, so its error is measured
// relative to sum_j p_j |v_j| (as tests/backend_ops/test_attention.cpp does); kTol = 2e-5 is five
// times sqrt(n) * 2^-24 for the longest rows here (n = 4096), the usual f32 summation estimate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/attention/flash_kernels.h"
#include "kernels/cuda/softmax_math.h"

namespace inferscope::gpu {
namespace {

constexpr double kTol = 2e-5;
constexpr int32_t kDim = 16;

// Scores (log2 domain) and value rows of one query row.
struct Row {
  std::vector<float> s, v;  // v: (n, kDim)
  int32_t n() const { return static_cast<int32_t>(s.size()); }
};

Row random_row(int32_t n, std::mt19937& rng, float score_sigma = 3.0f) {
  std::normal_distribution<float> score(0.0f, score_sigma), value(0.0f, 1.0f);
  Row row{std::vector<float>(n), std::vector<float>(static_cast<size_t>(n) * kDim)};
  for (float& x : row.s) x = score(rng);
  for (float& x : row.v) x = value(rng);
  return row;
}

// One split's state and accumulator O.
struct Partial {
  OnlineSoftmax state;
  std::vector<float> o = std::vector<float>(kDim, 0.0f);
};

// Scores begin .. end-1 one at a time through online_softmax_add.
Partial one_pass(const Row& row, int32_t begin, int32_t end) {
  Partial p;
  for (int32_t j = begin; j < end; ++j) {
    const ScoreStep step = online_softmax_add(p.state, row.s[j]);
    for (int32_t d = 0; d < kDim; ++d) p.o[d] = step.alpha * p.o[d] + step.p * row.v[static_cast<size_t>(j) * kDim + d];
  }
  return p;
}

// Merges b into a as the merge kernel does.
void merge_into(Partial& a, const Partial& b) {
  const MergeFactors f = online_softmax_merge(a.state, b.state);
  for (int32_t d = 0; d < kDim; ++d) a.o[d] = f.a * a.o[d] + f.b * b.o[d];
}

std::vector<float> finish(const Partial& p) {
  std::vector<float> out(kDim);
  for (int32_t d = 0; d < kDim; ++d) out[d] = p.o[d] / p.state.l;
  return out;
}

// Two passes in double: max, then weights 2^(s - max) and the weighted sum; masked scores (-inf)
// get weight 0. Also sum_j p_j |v_j|, the error scale.
struct Reference {
  std::vector<double> out, scale;
};

Reference two_pass(const Row& row) {
  double max = -INFINITY, sum = 0.0;
  for (float s : row.s) max = std::max(max, static_cast<double>(s));
  std::vector<double> w(row.s.size());
  for (size_t j = 0; j < w.size(); ++j) sum += w[j] = row.s[j] == -INFINITY ? 0.0 : std::exp2(row.s[j] - max);
  Reference ref{std::vector<double>(kDim, 0.0), std::vector<double>(kDim, 0.0)};
  for (size_t j = 0; j < w.size(); ++j) {
    for (int32_t d = 0; d < kDim; ++d) {
      ref.out[d] += w[j] / sum * row.v[j * kDim + d];
      ref.scale[d] += w[j] / sum * std::fabs(row.v[j * kDim + d]);
    }
  }
  return ref;
}

double max_error(const std::vector<float>& got, const Reference& ref) {
  double worst = 0.0;
  for (int32_t d = 0; d < kDim; ++d) {
    const double e = std::fabs(got[d] - ref.out[d]) / ref.scale[d];
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  }
  return worst;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(SoftmaxMath, OnePassMatchesTheTwoPassSoftmax) {
  std::mt19937 rng(1);
  for (int32_t n : {1, 2, 7, 100, 4096}) {
    for (float sigma : {0.5f, 3.0f, 30.0f}) {
      const Row row = random_row(n, rng, sigma);
      EXPECT_LE(max_error(finish(one_pass(row, 0, n)), two_pass(row)), kTol) << "n " << n << " sigma " << sigma;
    }
  }
}

TEST(SoftmaxMath, MergingSplitsMatchesTheUnsplitPass) {
  std::mt19937 rng(2);
  const Row row = random_row(3000, rng);
  const Reference ref = two_pass(row);
  for (int32_t k : {1, 2, 3, 6, 17}) {
    // k splits of near-equal length, folded left to right as the merge kernel folds chunks
    Partial merged;
    for (int32_t c = 0; c < k; ++c) merge_into(merged, one_pass(row, row.n() * c / k, row.n() * (c + 1) / k));
    EXPECT_LE(max_error(finish(merged), ref), kTol) << k << " splits";
  }
}

TEST(SoftmaxMath, MergeIsAssociativeWithinTheTolerance) {
  std::mt19937 rng(3);
  const Row row = random_row(1500, rng, 8.0f);
  const Partial a = one_pass(row, 0, 500), b = one_pass(row, 500, 1000), c = one_pass(row, 1000, 1500);
  Partial left = a, right = b;
  merge_into(left, b);
  merge_into(left, c);  // (a ⊕ b) ⊕ c
  merge_into(right, c);
  Partial right_all = a;
  merge_into(right_all, right);  // a ⊕ (b ⊕ c)
  const Reference ref = two_pass(row);
  EXPECT_LE(max_error(finish(left), ref), kTol);
  EXPECT_LE(max_error(finish(right_all), ref), kTol);
  EXPECT_NEAR(left.state.m, right_all.state.m, 0.0f);
  EXPECT_NEAR(left.state.l, right_all.state.l, kTol * left.state.l);
}

TEST(SoftmaxMath, EmptySplitsAreTheIdentityBitForBit) {
  std::mt19937 rng(4);
  const Row row = random_row(300, rng);
  const Partial full = one_pass(row, 0, 300), empty;
  // an empty split after, before and between non-empty ones changes nothing
  Partial after = full;
  merge_into(after, empty);
  Partial before = empty;
  merge_into(before, full);
  EXPECT_TRUE(same_bits(finish(after), finish(full)));
  EXPECT_TRUE(same_bits(finish(before), finish(full)));
  EXPECT_EQ(after.state.m, full.state.m);
  EXPECT_EQ(before.state.l, full.state.l);
  // two empty splits stay empty
  Partial both = empty;
  merge_into(both, empty);
  EXPECT_EQ(both.state.m, -INFINITY);
  EXPECT_EQ(both.state.l, 0.0f);
}

// A split whose scores are all NaN (a NaN query or key) keeps m = -inf, as an empty one does, but its
// l and O are NaN: merged either way round, the row's output is NaN, as the CPU kernels give, never
// the other splits' softmax as if the NaN split held no key.
TEST(SoftmaxMath, ASplitOfNanScoresPoisonsTheRowNotDropped) {
  std::mt19937 rng(7);
  const Row row = random_row(64, rng);
  Partial nan_split;
  for (int32_t j = 0; j < 4; ++j) {
    const float alpha = online_softmax_rescale(nan_split.state, NAN);  // a tile's fmaxf over NaNs
    const float p = online_softmax_weight(nan_split.state, NAN);
    nan_split.state.l += p;
    for (int32_t d = 0; d < kDim; ++d) nan_split.o[d] = alpha * nan_split.o[d] + p * row.v[static_cast<size_t>(j) * kDim + d];
  }
  ASSERT_EQ(nan_split.state.m, -INFINITY);
  ASSERT_TRUE(std::isnan(nan_split.state.l));
  Partial after = one_pass(row, 0, 64);
  merge_into(after, nan_split);
  Partial before = nan_split;
  merge_into(before, one_pass(row, 0, 64));
  for (const Partial* merged : {&after, &before}) {
    EXPECT_TRUE(std::isnan(merged->state.l));
    for (float x : finish(*merged)) EXPECT_TRUE(std::isnan(x));
  }
}

TEST(SoftmaxMath, MaskedScoresWeighNothing) {
  std::mt19937 rng(5);
  Row row = random_row(200, rng);
  Row visible = row;
  // mask every third score, and the first ones, so the state starts on masked scores
  for (int32_t j = 0; j < row.n(); ++j) {
    if (j < 5 || j % 3 == 0) row.s[j] = -INFINITY;
  }
  visible.s.clear();
  visible.v.clear();
  for (int32_t j = 0; j < row.n(); ++j) {
    if (row.s[j] == -INFINITY) continue;
    visible.s.push_back(row.s[j]);
    visible.v.insert(visible.v.end(), row.v.begin() + j * kDim, row.v.begin() + (j + 1) * kDim);
  }
  const std::vector<float> masked = finish(one_pass(row, 0, row.n()));
  EXPECT_TRUE(same_bits(masked, finish(one_pass(visible, 0, visible.n()))));
  EXPECT_LE(max_error(masked, two_pass(row)), kTol);
  // a wholly masked run leaves an empty state, whose merge is the identity
  const Partial all_masked = one_pass(row, 0, 5);
  EXPECT_EQ(all_masked.state.m, -INFINITY);
  EXPECT_EQ(all_masked.state.l, 0.0f);
  for (float x : all_masked.o) EXPECT_EQ(x, 0.0f);
}

TEST(SoftmaxMath, RescaleIsExactlyOneWhenTheMaxDoesNotGrow) {
  OnlineSoftmax s;
  EXPECT_EQ(online_softmax_rescale(s, -INFINITY), 1.0f);  // nothing seen, nothing new
  EXPECT_EQ(online_softmax_rescale(s, 2.0f), 0.0f);       // the first scores: the empty O rescales to 0
  s.l = 3.0f;
  EXPECT_EQ(online_softmax_rescale(s, 1.5f), 1.0f);
  EXPECT_EQ(s.l, 3.0f);
  EXPECT_EQ(online_softmax_rescale(s, 3.0f), 0.5f);  // the max grows by 1: 2^-1
  EXPECT_EQ(s.l, 1.5f);
  EXPECT_EQ(online_softmax_weight(s, -INFINITY), 0.0f);
  EXPECT_EQ(online_softmax_weight(s, 3.0f), 1.0f);
}

// The tile form the kernels use (rescale by a tile's max, then each score's weight) agrees with the
// CPU FlashAttention row update (flash_kernels_scalar), which the CPU attention runs.
TEST(SoftmaxMath, TileUpdatesMatchTheCpuFlashKernel) {
  std::mt19937 rng(6);
  const Row row = random_row(256, rng);
  const FlashRowKernels& cpu = flash_kernels_scalar();
  float cpu_m = -INFINITY, cpu_l = 0.0f;
  std::vector<float> cpu_o(kDim, 0.0f);
  Partial ours;
  constexpr int32_t kTile = 32;
  for (int32_t t0 = 0; t0 < row.n(); t0 += kTile) {
    std::vector<float> s(row.s.begin() + t0, row.s.begin() + t0 + kTile);
    cpu.update(s.data(), kTile, row.v.data() + static_cast<size_t>(t0) * kDim, kDim, cpu_m, cpu_l, cpu_o.data());
    const float alpha = online_softmax_rescale(ours.state, *std::max_element(row.s.begin() + t0, row.s.begin() + t0 + kTile));
    for (float& x : ours.o) x *= alpha;
    for (int32_t j = t0; j < t0 + kTile; ++j) {
      const float p = online_softmax_weight(ours.state, row.s[j]);
      ours.state.l += p;
      for (int32_t d = 0; d < kDim; ++d) ours.o[d] += p * row.v[static_cast<size_t>(j) * kDim + d];
    }
  }
  EXPECT_EQ(ours.state.m, cpu_m);
  EXPECT_NEAR(ours.state.l, cpu_l, kTol * cpu_l);
  const Reference ref = two_pass(row);
  std::vector<float> cpu_out(kDim);
  for (int32_t d = 0; d < kDim; ++d) cpu_out[d] = cpu_o[d] / cpu_l;
  EXPECT_LE(max_error(finish(ours), ref), kTol);
  EXPECT_LE(max_error(cpu_out, ref), kTol);
}

}  // namespace
}  // namespace inferscope::gpu
