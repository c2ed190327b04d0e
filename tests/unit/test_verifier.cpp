// Speculative verification: the emitted tokens follow the target's distribution exactly (chi-square
// over 200,000 seeded trials, first and second position), greedy acceptance, the penalty over
// accepted drafts, seeded repeatability, and broken rows.
#include "core/spec/verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace inferscope {
namespace {

using Dist = std::vector<double>;  // a dense distribution over the test vocabulary

constexpr size_t kVocab = 6;
constexpr int kTrials = 200'000;

// Critical values of chi-square at a tail probability of 1e-6, by degrees of freedom (index 0 unused):
// the x with Q(df/2, x/2) = 1e-6 (the regularized upper incomplete gamma function), solved by bisection
// with mpmath at 30 digits. df = 2 checks by hand: Q = exp(-x/2), so x = 2 ln(1e6) = 27.631021.
// ChiSquare.CriticalValuesHaveTailOneInAMillion recomputes each tail in closed form. With 1e-6 per
// test the suite's false alarm rate is about 1e-5 (and every run is seeded, so it repeats).
constexpr double kChi2Critical[] = {0.0, 23.928127, 27.631021, 30.664850, 33.376842, 35.888187};

// The chi-square upper tail P(X > x) for integer df, in closed form: for even df a Poisson sum; for
// odd df erfc(sqrt(x/2)) plus the half-integer terms (x/2)^(k+1/2) / Gamma(k+3/2).
double chi2_tail(double x, int df) {
  const double h = x / 2.0;
  double sum = 0.0;
  if (df % 2 == 0) {
    double term = 1.0;
    for (int k = 0; k < df / 2; ++k) {
      sum += term;
      term *= h / (k + 1);
    }
    return std::exp(-h) * sum;
  }
  double term = std::sqrt(h) / (std::sqrt(std::numbers::pi) / 2.0);  // Gamma(3/2) = sqrt(pi) / 2
  for (int k = 0; k < df / 2; ++k) {
    sum += term;
    term *= h / (k + 1.5);
  }
  return std::erfc(std::sqrt(h)) + std::exp(-h) * sum;
}

// Pearson's statistic of `counts` against `p` over the categories with expected count > 0; a token
// with p = 0 must never have been seen.
void expect_follows(const std::vector<int64_t>& counts, const Dist& p, const std::string& what) {
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  ASSERT_GT(total, 10'000) << what << ": too few samples to judge";
  double stat = 0.0;
  int categories = 0;
  for (size_t t = 0; t < p.size(); ++t) {
    if (p[t] == 0.0) {
      EXPECT_EQ(counts[t], 0) << what << ": token " << t << " has p = 0 but was emitted";
      continue;
    }
    const double expected = p[t] * static_cast<double>(total);
    stat += (static_cast<double>(counts[t]) - expected) * (static_cast<double>(counts[t]) - expected) / expected;
    ++categories;
  }
  const int df = categories - 1;
  ASSERT_GE(df, 1);
  ASSERT_LT(static_cast<size_t>(df), std::size(kChi2Critical));
  EXPECT_LT(stat, kChi2Critical[df]) << what << ": chi-square " << stat << " with " << df << " df over " << total
                                     << " samples";
}

// Logits whose softmax is p (-inf where p = 0), rows concatenated.
std::vector<float> logits_of(const std::vector<Dist>& rows) {
  std::vector<float> out;
  for (const Dist& p : rows)
    for (double x : p)
      out.push_back(x == 0.0 ? -std::numeric_limits<float>::infinity() : static_cast<float>(std::log(x)));
  return out;
}

TokenProbs sparse(const Dist& q) {
  TokenProbs out;
  for (size_t t = 0; t < q.size(); ++t)
    if (q[t] > 0.0) out.emplace_back(static_cast<TokenId>(t), static_cast<float>(q[t]));
  return out;
}

// Inverse-CDF draw with the test's own generator (not the sampler's).
TokenId draw_from(const Dist& q, std::mt19937_64& rng) {
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  double cumulative = 0.0;
  for (size_t t = 0; t < q.size(); ++t) {
    cumulative += q[t];
    if (u < cumulative) return static_cast<TokenId>(t);
  }
  for (size_t t = q.size(); t-- > 0;)
    if (q[t] > 0.0) return static_cast<TokenId>(t);
  return 0;
}

SamplingParams plain_sampling(uint64_t seed) {
  SamplingParams params;
  params.temperature = 1.0f;
  params.seed = seed;
  return params;
}

// kTrials verifications of drafts drawn from q_rows (the test's generator) against target rows
// p_rows (one more than q_rows), one seeded sampler throughout; `one_hot` leaves Draft::q empty
// (q_rows must then be one-hot). Calls each(verification) per trial.
template <class Each>
void run_trials(const std::vector<Dist>& p_rows, const std::vector<Dist>& q_rows, bool one_hot, uint64_t seed,
                Each&& each) {
  ASSERT_EQ(p_rows.size(), q_rows.size() + 1);
  const std::vector<float> rows = logits_of(p_rows);
  Sampler sampler(plain_sampling(seed));
  std::mt19937_64 rng(seed ^ 0x9E3779B97F4A7C15ull);
  Draft draft;
  draft.tokens.resize(q_rows.size());
  if (!one_hot)
    for (const Dist& q : q_rows) draft.q.push_back(sparse(q));
  const std::vector<TokenId> history = {1, 2};
  for (int trial = 0; trial < kTrials; ++trial) {
    for (size_t i = 0; i < q_rows.size(); ++i) draft.tokens[i] = draw_from(q_rows[i], rng);
    const Verification v = verify_draft(rows, kVocab, draft, sampler, history);
    ASSERT_EQ(v.emitted.size(), static_cast<size_t>(v.accepted) + 1);
    each(v);
  }
}

// The first emitted token over kTrials one-draft verifications must follow p (row 1 is arbitrary).
// Also checks the reported probabilities: p of the emitted token under row 0, q for accepted drafts.
void expect_first_follows_p(const Dist& p, const Dist& q, bool one_hot, uint64_t seed, const std::string& what,
                            int64_t* rejections = nullptr) {
  std::vector<int64_t> counts(kVocab, 0);
  double worst_p = 0.0, worst_q = 0.0;
  int64_t rejected = 0;
  run_trials({p, Dist(kVocab, 1.0 / kVocab)}, {q}, one_hot, seed, [&](const Verification& v) {
    const EmittedToken& e = v.emitted.front();
    ++counts[static_cast<size_t>(e.id)];
    rejected += v.rejected;
    worst_p = std::max(worst_p, std::abs(e.p - p[static_cast<size_t>(e.id)]));
    const double want_q = e.origin == TokenOrigin::Accepted ? q[static_cast<size_t>(e.id)] : 0.0;
    worst_q = std::max(worst_q, std::abs(e.q - want_q));
  });
  expect_follows(counts, p, what);
  EXPECT_LT(worst_p, 1e-6) << what << ": EmittedToken::p is not the target's probability";
  EXPECT_LT(worst_q, 1e-6) << what << ": EmittedToken::q is not the draft's probability";
  if (rejections != nullptr) *rejections = rejected;
}

TEST(ChiSquare, CriticalValuesHaveTailOneInAMillion) {
  for (int df = 1; df < static_cast<int>(std::size(kChi2Critical)); ++df)
    EXPECT_NEAR(chi2_tail(kChi2Critical[df], df) / 1e-6, 1.0, 1e-4) << "df " << df;
  EXPECT_NEAR(chi2_tail(3.841459, 1), 0.05, 1e-7);  // the textbook 5% point for one degree of freedom
}

// Residual {0: 0.25, 3: 0.10}, mass 0.35; token 3 only ever comes from the residual (q = 0), token 5
// is drafted 20% of the time but has p = 0. Without renormalising, the residual draw would keep u < 0.25
// for token 0 and give the rest to token 3 (the draw's rounding fallback): token 0 would get
// 0.10 + 0.35 * 0.25 = 0.19 instead of 0.35, a chi-square of about 68,000 against a critical 33.4.
TEST(VerifierExactness, OverlappingSupportsFollowTarget) {
  expect_first_follows_p({0.35, 0.25, 0.20, 0.10, 0.10, 0.00}, {0.10, 0.40, 0.20, 0.00, 0.10, 0.20}, false, 11,
                         "overlapping p, q");
}

// q misses p's most likely token entirely and puts half its mass where p has none: residual
// {2: 0.4, 3: 0.3}, mass 0.7. Unnormalised, token 2 would get 0.2 + 0.7 * 0.4 = 0.48 instead of 0.6
// (chi-square about 14,000 against 27.6).
TEST(VerifierExactness, MostlyDisjointSupportsFollowTarget) {
  expect_first_follows_p({0.0, 0.1, 0.6, 0.3, 0.0, 0.0}, {0.5, 0.3, 0.2, 0.0, 0.0, 0.0}, false, 12,
                         "mostly disjoint p, q");
}

// An n-gram style draft (Draft::q empty, one-hot at token 1): accepted with p(1) = 0.4, otherwise the
// residual is p without token 1, mass 0.6. Unnormalised, token 3 would get 0.6 * 0.7 = 0.42 instead of
// 0.30 (chi-square about 19,000 against 30.7).
TEST(VerifierExactness, OneHotDraftFollowsTarget) {
  expect_first_follows_p({0.05, 0.40, 0.25, 0.30, 0.0, 0.0}, {0.0, 1.0, 0.0, 0.0, 0.0, 0.0}, true, 13,
                         "one-hot draft");
}

// q == p: every draft is accepted, so the drafts alone carry p (a verifier accepting with probability
// p(x) alone would reject 80% here). p is recomputed from log(p) in float, so px and qx may differ by
// an ulp: a rejection then has probability about 1e-7 per trial.
TEST(VerifierExactness, DraftEqualToTargetIsAlwaysAccepted) {
  const Dist p = {0.30, 0.20, 0.20, 0.15, 0.10, 0.05};
  int64_t rejections = -1;
  expect_first_follows_p(p, p, false, 14, "q == p", &rejections);
  EXPECT_LE(rejections, 5);
}

// Three rows that differ: p1 (row 0), p2 (row 1), p3 (row 2).
const Dist kP1 = {0.35, 0.25, 0.20, 0.10, 0.10, 0.00};
const Dist kQ1 = {0.10, 0.40, 0.20, 0.00, 0.10, 0.20};
const Dist kP2 = {0.05, 0.10, 0.15, 0.30, 0.40, 0.00};
const Dist kQ2 = {0.30, 0.30, 0.10, 0.10, 0.20, 0.00};
const Dist kP3 = {0.00, 0.00, 0.10, 0.20, 0.30, 0.40};

// k = 2: after an accepted first draft, the second emitted token (accepted draft 1 or the correction
// at row 1) follows p2; after two accepted drafts, the bonus follows p3. Row 1's residual
// {2: 0.05, 3: 0.2, 4: 0.2}, mass 0.45, unnormalised would give token 4 0.2 + 0.45 * 0.75 = 0.54
// instead of 0.40 (chi-square about 12,000 over ~130,000 samples); judging draft 1 or drawing the bonus
// against the wrong row fails as widely (the bonus from row 1: about 36,000), since p1, p2 and p3 are far apart.
TEST(VerifierExactness, SecondAndThirdPositionsFollowTheirRows) {
  std::vector<int64_t> second(kVocab, 0), third(kVocab, 0);
  run_trials({kP1, kP2, kP3}, {kQ1, kQ2}, false, 21, [&](const Verification& v) {
    if (v.emitted[0].origin != TokenOrigin::Accepted) return;
    ++second[static_cast<size_t>(v.emitted[1].id)];
    if (v.emitted[1].origin != TokenOrigin::Accepted) return;
    ASSERT_EQ(v.emitted.size(), 3u);
    ASSERT_EQ(v.emitted[2].origin, TokenOrigin::Bonus);
    ++third[static_cast<size_t>(v.emitted[2].id)];
  });
  expect_follows(second, kP2, "k = 2, second token");
  expect_follows(third, kP3, "k = 2, bonus token");
}

// k = 1: an accepted draft is followed by the bonus token, from row 1 (p2). A verifier that skipped
// the bonus fails the size check on every accepted trial; one that drew it from row 0 (p1) would give
// token 0 0.35 instead of 0.05 (chi-square about 310,000).
TEST(VerifierExactness, BonusAfterOneAcceptedDraftFollowsNextRow) {
  std::vector<int64_t> second(kVocab, 0);
  int64_t accepted = 0;
  run_trials({kP1, kP2}, {kQ1}, false, 22, [&](const Verification& v) {
    if (v.emitted[0].origin != TokenOrigin::Accepted) return;
    ++accepted;
    ASSERT_EQ(v.emitted.size(), 2u);
    ASSERT_EQ(v.emitted[1].origin, TokenOrigin::Bonus);
    EXPECT_FALSE(v.rejected);
    ++second[static_cast<size_t>(v.emitted[1].id)];
  });
  // Acceptance rate sum(min(p1, q1)) = 0.65: 130,000 expected, sd about 213.
  EXPECT_NEAR(static_cast<double>(accepted), 0.65 * kTrials, 2000.0);
  expect_follows(second, kP2, "k = 1, bonus token");
}

// Greedy rows over 6 tokens with argmax 2, 4, 1, 0.
std::vector<float> greedy_rows() {
  return {0, 1, 5, 2, 0, 0,  //
          0, 1, 2, 3, 6, 0,  //
          1, 4, 2, 3, 0, 0,  //
          7, 1, 2, 3, 0, 0};
}

Verification verify_greedy(const std::vector<float>& rows, std::vector<TokenId> drafts, Sampler& sampler) {
  const std::vector<TokenId> history = {5};
  const size_t n = drafts.size();
  return verify_draft(std::span(rows).first((n + 1) * kVocab), kVocab, Draft{std::move(drafts), {}}, sampler,
                      history);
}

TEST(VerifierGreedy, StopsAtFirstMismatchWithTargetArgmax) {
  Sampler sampler(SamplingParams{});
  const Verification v = verify_greedy(greedy_rows(), {2, 4, 3}, sampler);
  ASSERT_EQ(v.emitted.size(), 3u);
  EXPECT_EQ(v.accepted, 2);
  EXPECT_EQ(v.emitted[0].id, 2);
  EXPECT_EQ(v.emitted[0].origin, TokenOrigin::Accepted);
  EXPECT_EQ(v.emitted[1].id, 4);
  EXPECT_EQ(v.emitted[1].origin, TokenOrigin::Accepted);
  EXPECT_EQ(v.emitted[2].id, 1);  // row 2's argmax, not the refused draft 3
  EXPECT_EQ(v.emitted[2].origin, TokenOrigin::Corrected);
  EXPECT_FLOAT_EQ(v.emitted[2].p, 1.0f);
  EXPECT_FLOAT_EQ(v.emitted[2].q, 0.0f);
  EXPECT_TRUE(v.rejected);
  EXPECT_EQ(v.refused.id, 3);
  EXPECT_FLOAT_EQ(v.refused.p, 0.0f);
  EXPECT_FLOAT_EQ(v.refused.q, 1.0f);

  // A refusal at draft 0: the drafts after it are never judged.
  const Verification first = verify_greedy(greedy_rows(), {0, 4, 1}, sampler);
  ASSERT_EQ(first.emitted.size(), 1u);
  EXPECT_EQ(first.accepted, 0);
  EXPECT_EQ(first.emitted[0].id, 2);
  EXPECT_EQ(first.emitted[0].origin, TokenOrigin::Corrected);
  EXPECT_EQ(first.refused.id, 0);
}

TEST(VerifierGreedy, AllAcceptedGivesBonusFromLastRow) {
  Sampler sampler(SamplingParams{});
  const Verification v = verify_greedy(greedy_rows(), {2, 4, 1}, sampler);
  ASSERT_EQ(v.emitted.size(), 4u);
  EXPECT_EQ(v.accepted, 3);
  EXPECT_FALSE(v.rejected);
  EXPECT_EQ(v.emitted[3].id, 0);
  EXPECT_EQ(v.emitted[3].origin, TokenOrigin::Bonus);
  EXPECT_FLOAT_EQ(v.emitted[3].p, 1.0f);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(v.emitted[static_cast<size_t>(i)].origin, TokenOrigin::Accepted);
    EXPECT_FLOAT_EQ(v.emitted[static_cast<size_t>(i)].q, 1.0f);  // one-hot drafts
  }

  const Verification none = verify_greedy(greedy_rows(), {}, sampler);  // no drafts: row 0's token
  ASSERT_EQ(none.emitted.size(), 1u);
  EXPECT_EQ(none.emitted[0].id, 2);
  EXPECT_EQ(none.accepted, 0);
}

TEST(VerifierGreedy, ConsumesNoRandomness) {
  SamplingParams params;
  params.seed = 77;
  Sampler used(params), fresh(params);
  verify_greedy(greedy_rows(), {2, 4, 3}, used);
  verify_greedy(greedy_rows(), {2, 4, 1}, used);
  verify_greedy(greedy_rows(), {0}, used);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(used.uniform(), fresh.uniform());
}

// Row 1 prefers token 3 (logit 4) over token 5 (logit 3); with penalty 2 and the accepted draft 0 = 3
// in its context, token 3 falls to 4 / 2 = 2 and token 5 wins. The history (token 0) holds no 3.
TEST(VerifierGreedy, RepetitionPenaltySeesAcceptedDrafts) {
  const std::vector<float> rows = {0, 1, 2, 5, 0, 0,  //
                                   0, 1, 2, 4, 0, 3,  //
                                   0, 1, 2, 0, 6, 0};
  const std::vector<TokenId> history = {0};
  const Draft draft{{3, 3}, {}};
  SamplingParams params;
  params.repeat_penalty = 2.0f;
  Sampler penalised(params);
  const Verification v = verify_draft(rows, kVocab, draft, penalised, history);
  ASSERT_EQ(v.emitted.size(), 2u);
  EXPECT_EQ(v.emitted[0].id, 3);
  EXPECT_EQ(v.emitted[0].origin, TokenOrigin::Accepted);
  EXPECT_EQ(v.emitted[1].id, 5);
  EXPECT_EQ(v.emitted[1].origin, TokenOrigin::Corrected);

  Sampler unpenalised(SamplingParams{});  // control: without the penalty both drafts pass
  const Verification control = verify_draft(rows, kVocab, draft, unpenalised, history);
  ASSERT_EQ(control.emitted.size(), 3u);
  EXPECT_EQ(control.accepted, 2);
  EXPECT_EQ(control.emitted[2].id, 4);
}

TEST(VerifierSampling, SeededRunRepeats) {
  constexpr size_t kV = 16, kK = 4;
  std::mt19937_64 rng(5);
  std::vector<float> rows((kK + 1) * kV);
  for (float& x : rows) x = static_cast<float>(rng() >> 40) / static_cast<float>(1 << 24) * 6.0f - 3.0f;
  TokenProbs q;
  for (TokenId t = 0; t < 8; ++t) q.emplace_back(t, 0.125f);
  SamplingParams params;
  params.temperature = 0.8f;
  params.top_k = 8;
  params.top_p = 0.95f;
  params.repeat_penalty = 1.2f;
  params.seed = 1234;
  Sampler a(params), b(params);
  const std::vector<TokenId> history = {3, 1, 4, 1, 5};
  int64_t accepted = 0, total = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Draft draft;
    for (size_t i = 0; i < kK; ++i) {
      draft.tokens.push_back(static_cast<TokenId>(rng() % 8));
      draft.q.push_back(q);
    }
    const Verification va = verify_draft(rows, kV, draft, a, history);
    const Verification vb = verify_draft(rows, kV, draft, b, history);
    ASSERT_EQ(va.emitted.size(), vb.emitted.size()) << "trial " << trial;
    for (size_t i = 0; i < va.emitted.size(); ++i) {
      ASSERT_EQ(va.emitted[i].id, vb.emitted[i].id) << "trial " << trial;
      ASSERT_EQ(va.emitted[i].origin, vb.emitted[i].origin) << "trial " << trial;
    }
    accepted += va.accepted;
    total += static_cast<int64_t>(kK);
  }
  EXPECT_GT(accepted, 0);  // the run exercised both acceptance and rejection
  EXPECT_LT(accepted, total);
}

TEST(VerifierRows, AllNanRowThrows) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> rows = greedy_rows();
  for (size_t t = 0; t < kVocab; ++t) rows[kVocab + t] = nan;  // row 1, reached after draft 0 = 2 passes
  Sampler greedy(SamplingParams{});
  EXPECT_THROW(verify_greedy(rows, {2, 4}, greedy), std::runtime_error);
  for (size_t t = 0; t < kVocab; ++t) rows[t] = nan;
  Sampler sampling(plain_sampling(3));
  EXPECT_THROW(verify_draft(std::span(rows).first(2 * kVocab), kVocab, Draft{{2}, {}}, sampling, {}),
               std::runtime_error);
}

TEST(VerifierRows, MalformedInputIsRefused) {
  const std::vector<float> rows = greedy_rows();
  Sampler sampler(SamplingParams{});
  EXPECT_THROW(verify_draft(rows, kVocab, Draft{{2}, {}}, sampler, {}), std::invalid_argument);  // 4 rows for 1 draft
  EXPECT_THROW(verify_draft(std::span(rows).first(2 * kVocab), kVocab, Draft{{6}, {}}, sampler, {}),
               std::invalid_argument);  // token outside the vocabulary
  EXPECT_THROW(verify_draft(std::span(rows).first(2 * kVocab), kVocab, Draft{{2}, {{}, {}}}, sampler, {}),
               std::invalid_argument);  // two q for one token
}

TEST(Draft, QOfAndOriginNames) {
  const Draft one_hot{{4, 2}, {}};
  EXPECT_FLOAT_EQ(one_hot.q_of(1), 1.0f);
  const Draft sampled{{4, 2}, {{{4, 0.25f}, {1, 0.75f}}, {{1, 1.0f}}}};
  EXPECT_FLOAT_EQ(sampled.q_of(0), 0.25f);
  EXPECT_FLOAT_EQ(sampled.q_of(1), 0.0f);  // not in its distribution
  EXPECT_STREQ(token_origin_name(TokenOrigin::Plain), "plain");
  EXPECT_STREQ(token_origin_name(TokenOrigin::Accepted), "accepted");
  EXPECT_STREQ(token_origin_name(TokenOrigin::Corrected), "corrected");
  EXPECT_STREQ(token_origin_name(TokenOrigin::Bonus), "bonus");
}

}  // namespace
}  // namespace inferscope
