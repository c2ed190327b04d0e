// The sampler chain: greedy, seeding, top-k/top-p/min-p sets, repetition penalty, the drawn
// distribution's statistics, and robustness to extreme logits.
#include "core/sample/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

namespace inferscope {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> random_logits(size_t n, uint64_t seed, float scale = 3.0f) {
  std::mt19937_64 rng(seed);
  std::vector<float> v(n);
  for (auto& x : v) x = scale * (static_cast<float>(rng() >> 40) / static_cast<float>(1 << 24) - 0.5f) * 2.0f;
  return v;
}

std::set<int32_t> ids_of(const std::vector<std::pair<int32_t, float>>& dist) {
  std::set<int32_t> ids;
  for (const auto& [id, p] : dist) ids.insert(id);
  return ids;
}

double total_probability(const std::vector<std::pair<int32_t, float>>& dist) {
  double sum = 0.0;
  for (const auto& [id, p] : dist) sum += p;
  return sum;
}

// Logits whose softmax is exactly these probabilities.
std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> v;
  for (double p : probs) v.push_back(static_cast<float>(std::log(p)));
  return v;
}

TEST(Argmax, LowestIndexWinsTies) {
  EXPECT_EQ(argmax(std::vector<float>{1.0f, 3.0f, 3.0f, 2.0f}), 1);
  EXPECT_EQ(argmax(std::vector<float>{-kInf, -kInf}), 0);
  EXPECT_EQ(argmax(std::vector<float>{std::nanf(""), -5.0f}), 1);
}

TEST(Sampler, GreedyIsArgmaxAndConsumesNoRandomness) {
  Sampler greedy({.temperature = 0.0f});
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const auto logits = random_logits(1000, seed);
    EXPECT_EQ(greedy.sample(logits, {}), argmax(logits));
    ASSERT_EQ(greedy.last_distribution().size(), 1u);
    EXPECT_EQ(greedy.last_distribution()[0].second, 1.0f);
  }
  EXPECT_EQ(greedy.sample(std::vector<float>{0.5f, 2.0f, 2.0f}, {}), 1);
}

TEST(Sampler, SameSeedSameSequenceDifferentSeedDiffers) {
  const auto logits = random_logits(200, 7, 1.0f);  // flat enough that draws vary
  auto run = [&](uint64_t seed) {
    Sampler s({.temperature = 1.0f, .seed = seed});
    std::vector<int32_t> out;
    for (int i = 0; i < 64; ++i) out.push_back(s.sample(logits, {}));
    return out;
  };
  const auto first = run(42);
  EXPECT_EQ(first, run(42));
  EXPECT_NE(first, run(43));
  EXPECT_GT(std::set<int32_t>(first.begin(), first.end()).size(), 10u);
}

TEST(Sampler, TopKOneEqualsGreedy) {
  Sampler top1({.temperature = 1.5f, .top_k = 1, .seed = 9});
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    auto logits = random_logits(49152, seed);
    logits[seed * 31] = logits[static_cast<size_t>(argmax(logits))];  // a tie: the lower index must win
    EXPECT_EQ(top1.sample(logits, {}), argmax(logits));
  }
}

TEST(Sampler, TopKKeepsTheKLargestOfALargeVocabulary) {
  const auto logits = random_logits(49152, 3);
  Sampler s({.temperature = 0.8f, .top_k = 40});
  s.sample(logits, {});
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + 40, order.end(),
                    [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  EXPECT_EQ(ids_of(s.last_distribution()), std::set<int32_t>(order.begin(), order.begin() + 40));
  EXPECT_NEAR(total_probability(s.last_distribution()), 1.0, 1e-5);
}

TEST(Sampler, TopPKeepsTheSmallestNucleus) {
  const auto logits = logits_of({0.5, 0.25, 0.125, 0.0625, 0.0625});
  auto kept = [&](float top_p) {
    Sampler s({.temperature = 1.0f, .top_p = top_p});
    s.sample(logits, {});
    return s.last_distribution();
  };
  EXPECT_EQ(ids_of(kept(0.3f)), (std::set<int32_t>{0}));
  EXPECT_EQ(ids_of(kept(0.7f)), (std::set<int32_t>{0, 1}));
  EXPECT_EQ(ids_of(kept(0.8f)), (std::set<int32_t>{0, 1, 2}));
  EXPECT_EQ(ids_of(kept(0.9f)), (std::set<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(ids_of(kept(0.01f)), (std::set<int32_t>{0}));  // never empty
  // The kept set is renormalized: 0.5 and 0.25 become 2/3 and 1/3.
  const auto two = kept(0.7f);
  EXPECT_NEAR(two[0].second, 2.0 / 3.0, 1e-6);
  EXPECT_NEAR(two[1].second, 1.0 / 3.0, 1e-6);
}

TEST(Sampler, TopPOnALargeVocabularyMatchesAFullSort) {
  const auto logits = random_logits(5000, 11, 6.0f);
  Sampler s({.temperature = 1.0f, .top_p = 0.9f});
  s.sample(logits, {});
  // Reference: sort everything, cumulate the softmax until 0.9.
  std::vector<int32_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  const float max_logit = logits[order[0]];
  double z = 0.0;
  for (float l : logits) z += std::exp(double(l) - max_logit);
  std::set<int32_t> expected;
  double cumulative = 0.0;
  for (int32_t id : order) {
    expected.insert(id);
    cumulative += std::exp(double(logits[id]) - max_logit) / z;
    if (cumulative >= 0.9) break;
  }
  EXPECT_GT(expected.size(), 100u);  // a wide nucleus: several threshold rounds are needed
  EXPECT_EQ(ids_of(s.last_distribution()), expected);
}

TEST(Sampler, MinPKeepsTokensAboveAFractionOfTheBest) {
  const auto logits = logits_of({0.4, 0.3, 0.15, 0.1, 0.05});
  auto kept = [&](float min_p) {
    Sampler s({.temperature = 1.0f, .min_p = min_p});
    s.sample(logits, {});
    return ids_of(s.last_distribution());
  };
  EXPECT_EQ(kept(0.5f), (std::set<int32_t>{0, 1}));        // >= 0.2
  EXPECT_EQ(kept(0.3f), (std::set<int32_t>{0, 1, 2}));     // >= 0.12
  EXPECT_EQ(kept(0.2f), (std::set<int32_t>{0, 1, 2, 3}));  // >= 0.08
  EXPECT_EQ(kept(0.9f), (std::set<int32_t>{0}));
}

TEST(Sampler, RepetitionPenaltyChangesTheArgmax) {
  const std::vector<float> logits = {2.0f, 1.5f, -1.0f, -1.2f};
  const std::vector<int32_t> history = {0};
  Sampler plain({.temperature = 0.0f});
  Sampler penalized({.temperature = 0.0f, .repeat_penalty = 1.5f});
  EXPECT_EQ(plain.sample(logits, history), 0);
  EXPECT_EQ(penalized.sample(logits, history), 1);  // 2.0 / 1.5 < 1.5
  // A negative logit is multiplied: -1.0 * 1.5 < -1.2.
  const std::vector<float> negative = {-1.0f, -1.2f};
  EXPECT_EQ(penalized.sample(negative, history), 1);
}

TEST(Sampler, RepetitionPenaltyCountsEachTokenOnceWithinTheWindow) {
  const std::vector<float> logits = {2.0f, 1.0f};
  Sampler s({.temperature = 0.0f, .repeat_penalty = 1.5f, .repeat_last_n = 3});
  // Penalized once (2.0 / 1.5 = 1.33 > 1.0), not three times (0.59).
  EXPECT_EQ(s.sample(logits, std::vector<int32_t>{0, 0, 0}), 0);
  // Only the last three tokens count: 1.2 / 1.5 = 0.8 < 1.0 only when token 0 is among them.
  const std::vector<float> close = {1.2f, 1.0f};
  EXPECT_EQ(s.sample(close, std::vector<int32_t>{0, 2, 3, 4}), 0);
  EXPECT_EQ(s.sample(close, std::vector<int32_t>{2, 3, 0}), 1);
}

TEST(Sampler, DrawFrequenciesMatchTheTemperedSoftmax) {
  const std::vector<float> logits = {1.0f, 0.2f, -0.5f, 2.0f, 0.0f, -1.5f, 1.4f, 0.7f};
  const float temperature = 0.7f;
  Sampler s({.temperature = temperature, .seed = 2024});
  const int draws = 200000;
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < draws; ++i) ++counts[static_cast<size_t>(s.sample(logits, {}))];

  std::vector<double> expected(logits.size());
  double z = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) z += expected[i] = std::exp(logits[i] / temperature);
  double chi2 = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    const double e = draws * expected[i] / z;
    chi2 += (counts[i] - e) * (counts[i] - e) / e;
  }
  // 7 degrees of freedom: P(chi2 > 30) is about 1e-4.
  EXPECT_LT(chi2, 30.0);
}

TEST(Sampler, ExtremeLogitsStayFinite) {
  std::vector<float> logits = random_logits(1000, 5);
  for (size_t i = 0; i < logits.size(); i += 3) logits[i] = -kInf;
  logits[10] = 3e38f;  // overflows to +inf once divided by a small temperature
  logits[11] = -1e30f;
  logits[13] = std::nanf("");
  for (float temperature : {1e-4f, 0.5f, 1.0f, 100.0f}) {
    Sampler s({.temperature = temperature, .top_p = 0.95f, .min_p = 0.01f, .repeat_penalty = 1.3f, .seed = 3});
    for (int i = 0; i < 20; ++i) {
      const int32_t id = s.sample(logits, std::vector<int32_t>{10, 11, 12});
      EXPECT_TRUE(std::isfinite(logits[static_cast<size_t>(id)])) << "drew impossible token " << id;
      for (const auto& [cid, p] : s.last_distribution()) EXPECT_TRUE(std::isfinite(p));
      EXPECT_NEAR(total_probability(s.last_distribution()), 1.0, 1e-5);
    }
  }
}

TEST(Sampler, InfiniteLogitsShareTheProbability) {
  const std::vector<float> logits = {0.0f, kInf, 5.0f, kInf};
  Sampler s({.temperature = 1.0f, .seed = 1});
  for (int i = 0; i < 50; ++i) {
    const int32_t id = s.sample(logits, {});
    EXPECT_TRUE(id == 1 || id == 3);
  }
  EXPECT_EQ(s.last_distribution().size(), 2u);
}

TEST(Sampler, RejectsImpossibleInput) {
  EXPECT_THROW(Sampler({.top_k = -1}), std::invalid_argument);
  EXPECT_THROW(Sampler({.top_p = 0.0f}), std::invalid_argument);
  EXPECT_THROW(Sampler({.min_p = 1.5f}), std::invalid_argument);
  EXPECT_THROW(Sampler({.repeat_penalty = 0.0f}), std::invalid_argument);
  Sampler s({.temperature = 1.0f});
  EXPECT_THROW(s.sample(std::vector<float>{}, {}), std::invalid_argument);
  // Finite logits that a tiny temperature scales past the float range: an error, not token 0.
  Sampler tiny({.temperature = 1e-38f});
  EXPECT_THROW(tiny.sample(std::vector<float>{-10.0f, -20.0f}, {}), std::runtime_error);
}

// Every path (greedy, top-k 1, sampled with filters) refuses a row where nothing can be drawn,
// instead of emitting token 0.
TEST(Sampler, NoFiniteLogitIsAnError) {
  const float nan = std::nanf("");
  const std::vector<SamplingParams> paths = {
      {.temperature = 0.0f},
      {.temperature = 0.8f, .top_k = 1},
      {.temperature = 0.8f, .top_k = 40, .top_p = 0.9f, .min_p = 0.05f, .repeat_penalty = 1.3f},
  };
  const std::vector<std::vector<float>> rows = {{nan, nan, nan}, {-kInf, -kInf}, {nan, -kInf, nan, -kInf}};
  for (const SamplingParams& params : paths) {
    for (const auto& row : rows) {
      Sampler s(params);
      try {
        const int32_t id = s.sample(row, std::vector<int32_t>{0, 1});
        ADD_FAILURE() << "temperature " << params.temperature << ": drew token " << id;
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "sampling: no finite logit among the " + std::to_string(row.size()) +
                                             " candidates (all NaN or -inf)");
      }
    }
  }
}

// NaN never wins: a NaN logit is treated as -inf, whatever its position and the other values.
TEST(Sampler, NanLogitsNeverWin) {
  const float nan = std::nanf("");
  const std::vector<float> logits = {nan, -50.0f, nan, -60.0f, nan};
  Sampler greedy({.temperature = 0.0f});
  EXPECT_EQ(greedy.sample(logits, {}), 1);
  Sampler sampled({.temperature = 1.0f, .seed = 9});
  for (int i = 0; i < 50; ++i) {
    const int32_t id = sampled.sample(logits, {});
    EXPECT_TRUE(id == 1 || id == 3) << id;
    EXPECT_EQ(ids_of(sampled.last_distribution()), (std::set<int32_t>{1, 3}));
  }
}

}  // namespace
}  // namespace inferscope
