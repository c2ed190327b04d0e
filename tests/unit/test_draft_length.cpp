// The adaptive draft length: the step-cost curve, the acceptance estimate, and the lengths chosen from
// them (speculation drafts only where it is expected to pay).
#include <gtest/gtest.h>

#include <vector>

#include "core/spec/draft_length.h"

namespace inferscope {
namespace {

using Ks = std::vector<int32_t>;

TEST(DraftLength, ExpectedTokensPerVerifyIsTheGeometricSum) {
  EXPECT_DOUBLE_EQ(expected_tokens_per_verify(0.0, 4), 1.0);
  EXPECT_DOUBLE_EQ(expected_tokens_per_verify(1.0, 4), 5.0);
  EXPECT_DOUBLE_EQ(expected_tokens_per_verify(0.5, 2), 1.75);
}

TEST(DraftLength, TheCurveIsTheMedianOfEachCountInterpolatedBetweenThem) {
  StepCostCurve curve;
  EXPECT_FALSE(curve.seconds(1));
  EXPECT_EQ(curve.largest_measured(), 0);
  for (double s : {0.010, 0.011, 0.500}) curve.observe(1, s);  // one outlier does not move the median
  EXPECT_DOUBLE_EQ(*curve.seconds(1), 0.011);
  // Past the largest count measured: what it costs.
  EXPECT_DOUBLE_EQ(*curve.seconds(3), 0.011);
  curve.observe(5, 0.031);
  EXPECT_EQ(curve.largest_measured(), 5);
  EXPECT_NEAR(*curve.seconds(3), 0.021, 1e-12);  // halfway between 1 and 5
  // Only the last kSamples count: older steps age out.
  for (size_t i = 0; i < StepCostCurve::kSamples; ++i) curve.observe(1, 0.020);
  EXPECT_DOUBLE_EQ(*curve.seconds(1), 0.020);
  // An even number of samples: the mean of the middle two.
  curve.observe(2, 0.010);
  curve.observe(2, 0.014);
  EXPECT_DOUBLE_EQ(*curve.seconds(2), 0.012);
}

TEST(DraftLength, AcceptanceIsEstimatedByDraftPosition) {
  constexpr double d = AcceptanceEstimate::kDecay, w = AcceptanceEstimate::kPriorWeight;
  AcceptanceEstimate a;
  EXPECT_DOUBLE_EQ(a.alpha(0), 1.0 / 3.0);  // the prior: one acceptance, two rejections
  EXPECT_DOUBLE_EQ(a.alpha(5), 1.0 / 3.0);  // a later position starts from the one before it
  EXPECT_DOUBLE_EQ(a.expected_tokens(2)[2], 1 + 1.0 / 3 + 1.0 / 9);
  // Position 0 accepted, position 1 rejected; positions 2 and 3 say nothing.
  a.observe(4, 1);
  const double a0 = (d + 1) / (d + 1 + 2 * d);
  const double a1 = w * a0 / (1 + w);
  EXPECT_DOUBLE_EQ(a.alpha(0), a0);
  EXPECT_DOUBLE_EQ(a.alpha(1), a1);
  EXPECT_DOUBLE_EQ(a.alpha(3), a1);
  EXPECT_EQ(a.expected_tokens(3), (std::vector<double>{1, 1 + a0, 1 + a0 + a0 * a1, 1 + a0 + a0 * a1 + a0 * a1 * a1}));
  a.observe(0, 0);  // no draft: nothing learnt
  EXPECT_DOUBLE_EQ(a.alpha(1), a1);
  // First drafts that always hold and second ones that never do: the prior fades from the first, and
  // the second is judged by its own verdicts.
  for (int i = 0; i < 200; ++i) a.observe(2, 1);
  EXPECT_GT(a.alpha(0), 0.999);
  EXPECT_LT(a.alpha(1), 0.1);
  EXPECT_NEAR(a.expected_tokens(4)[4], 2.0, 0.1);
}

// A policy for request 1 whose shadows have all matched, on a machine where every step count in
// `seconds` (index = tokens) was measured.
DraftLengthPolicy trained(const std::vector<double>& seconds, int32_t max_k, bool free_shadows, bool matched) {
  DraftLengthPolicy p(max_k, free_shadows);
  for (int i = 0; i < 20; ++i) p.on_shadow(1, matched);
  for (size_t t = 1; t < seconds.size(); ++t) p.on_decode_step(static_cast<int32_t>(t), seconds[t]);
  return p;
}

TEST(DraftLength, NothingIsDraftedBeforeAPlainStepWasTimed) {
  DraftLengthPolicy p(8, true);
  for (int i = 0; i < 20; ++i) p.on_shadow(1, true);
  EXPECT_EQ(p.choose(std::vector<RequestId>{1}, 1), Ks{0});
}

TEST(DraftLength, DraftsGrowOneTokenPastTheLongestStepTimed) {
  // Memory-bound: every step costs the same. High acceptance: draft as far as measured, plus one.
  DraftLengthPolicy p = trained({0, 0.01}, 8, true, true);
  const std::vector<RequestId> one{1};
  EXPECT_EQ(p.choose(one, 1), Ks{1});
  p.on_decode_step(2, 0.01);
  EXPECT_EQ(p.choose(one, 1), Ks{2});
  for (int32_t t = 3; t <= 9; ++t) p.on_decode_step(t, 0.01);
  EXPECT_EQ(p.choose(one, 1), Ks{8});  // never past max_k
}

TEST(DraftLength, AStepCostingItsTokensNeverDrafts) {
  // Compute-bound: a step of t tokens costs t one-token steps; no acceptance below 1 pays for that.
  DraftLengthPolicy p = trained({0, 0.01, 0.02, 0.03, 0.04, 0.05}, 4, true, true);
  EXPECT_EQ(p.choose(std::vector<RequestId>{1}, 1), Ks{0});
}

TEST(DraftLength, TheLengthFollowsAcceptanceAgainstTheCurve) {
  // A 2-token step costs 1.5 plain ones, and each token after that 0.1 more (the exact kernels on AVX2).
  const std::vector<double> curve{0, 1.0, 1.5, 1.6, 1.7, 1.8};
  const std::vector<RequestId> one{1};
  // Drafts that always fail: nothing (the shadows keep measuring).
  DraftLengthPolicy failing = trained(curve, 4, true, false);
  EXPECT_EQ(failing.choose(one, 1), Ks{0});
  // Drafts that always hold: the longest; E(4) = 5 tokens for 1.8.
  DraftLengthPolicy holding = trained(curve, 4, true, true);
  EXPECT_GT(holding.alpha(1), 0.9);
  EXPECT_EQ(holding.choose(one, 1), Ks{4});
  // Acceptance recovers: the failing sequence drafts again once its shadows match.
  for (int i = 0; i < 30; ++i) failing.on_shadow(1, true);
  EXPECT_EQ(failing.choose(one, 1), Ks{4});
  // A sequence that is forgotten starts again from the prior, α = 1/3, which pays for no draft here
  // (E(1) = 1.33 tokens for 1.5, E(4) = 1.49 for 1.8).
  failing.forget(1);
  EXPECT_DOUBLE_EQ(failing.alpha(1), 1.0 / 3.0);
  EXPECT_EQ(failing.choose(one, 1), Ks{0});
}

TEST(DraftLength, AProposerWithoutFreeShadowsProbesNowAndThen) {
  DraftLengthPolicy p = trained({0, 1.0, 1.5, 1.6}, 2, false, false);
  const std::vector<RequestId> one{1};
  int probes = 0;
  for (int32_t i = 0; i < 3 * DraftLengthPolicy::kProbeInterval; ++i) {
    const Ks k = p.choose(one, 1);
    EXPECT_LE(k[0], 1);
    probes += k[0];
  }
  EXPECT_EQ(probes, 3);
}

TEST(DraftLength, EachSequenceOfABatchPaysForItsOwnDrafts) {
  // Two decodes: a step of 2 costs 1.0, every token past that 0.2 more. Sequence 1's drafts hold,
  // sequence 2's fail: only sequence 1 drafts, and it sees the step as two decodes plus its drafts.
  DraftLengthPolicy p(2, true);
  for (int i = 0; i < 20; ++i) {
    p.on_shadow(1, true);
    p.on_shadow(2, false);
  }
  for (int32_t t = 2; t <= 6; ++t) p.on_decode_step(t, 1.0 + 0.2 * (t - 2));
  EXPECT_EQ(p.choose(std::vector<RequestId>{2, 1}, 2), (Ks{0, 2}));
}

}  // namespace
}  // namespace inferscope
