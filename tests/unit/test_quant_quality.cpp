// Perplexity windows and the distribution measures, against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/quant/quality.h"

namespace inferscope {
namespace {

TEST(PerplexityWindows, EveryTokenAfterTheFirstIsScoredOnce) {
  for (int64_t ctx : {2, 3, 5, 16}) {
    for (int64_t n : {0, 1, 2, 3, 4, 5, 9, 10, 17, 40}) {
      const std::vector<TokenWindow> windows = perplexity_windows(n, ctx);
      std::vector<int> scored(static_cast<size_t>(n), 0);
      int64_t expected_begin = 0;
      for (const TokenWindow& w : windows) {
        EXPECT_EQ(w.begin, expected_begin) << "ctx " << ctx << " n " << n;
        EXPECT_GE(w.end - w.begin, 2);
        EXPECT_LE(w.end - w.begin, ctx);
        EXPECT_LE(w.end, n);
        for (int64_t i = w.begin + 1; i < w.end; ++i) ++scored[static_cast<size_t>(i)];
        expected_begin = w.end - 1;  // the next window starts on this one's last token
      }
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(scored[i], i == 0 ? 0 : 1) << "ctx " << ctx << " n " << n << " token " << i;
    }
  }
  EXPECT_EQ(perplexity_windows(10, 4).size(), 3u);  // [0,4) [3,7) [6,10)
  EXPECT_THROW(perplexity_windows(10, 1), std::invalid_argument);
}

// llama-perplexity's chunks: whole chunks of ctx only, the rest dropped, BOS first where the
// vocabulary uses it, positions ctx/2 .. ctx-2 scored.
TEST(PerplexityWindows, LlamaCppChunks) {
  const std::vector<TokenWindow> w = perplexity_windows(19, 8, PerplexityMethod::LlamaCpp, true);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].begin, 0);
  EXPECT_EQ(w[0].end, 8);
  EXPECT_EQ(w[1].begin, 8);
  EXPECT_EQ(w[1].end, 16);
  for (const TokenWindow& chunk : w) {
    EXPECT_EQ(chunk.first_scored, 4);
    EXPECT_TRUE(chunk.bos_first);
  }
  EXPECT_FALSE(perplexity_windows(16, 8, PerplexityMethod::LlamaCpp, false)[1].bos_first);
  EXPECT_EQ(perplexity_windows(15, 8, PerplexityMethod::LlamaCpp, true).size(), 1u);
  EXPECT_TRUE(perplexity_windows(7, 8, PerplexityMethod::LlamaCpp, true).empty());
  EXPECT_THROW(perplexity_windows(40, 3, PerplexityMethod::LlamaCpp, true), std::invalid_argument);
  EXPECT_STREQ(perplexity_method_name(PerplexityMethod::LlamaCpp), "llamacpp");
  EXPECT_EQ(perplexity_method_from_name("all-tokens"), PerplexityMethod::AllTokens);
  EXPECT_FALSE(perplexity_method_from_name("llama.cpp").has_value());
}

TEST(Quality, LogProbabilityOfASoftmax) {
  const std::vector<float> logits = {0.0f, std::log(3.0f), 1000.0f - 1000.0f};  // p = 1/5, 3/5, 1/5
  EXPECT_NEAR(log_probability(logits, 1), std::log(0.6), 1e-7);
  EXPECT_NEAR(log_probability(logits, 2), std::log(0.2), 1e-7);
  // shifted by a large constant: same distribution, no overflow
  const std::vector<float> shifted = {1000.0f, 1000.0f + std::log(3.0f), 1000.0f};
  EXPECT_NEAR(log_probability(shifted, 1), std::log(0.6), 1e-4);
  EXPECT_THROW(log_probability(logits, 3), std::invalid_argument);
  EXPECT_THROW(log_probability(logits, -1), std::invalid_argument);
}

TEST(Quality, KlDivergenceByHand) {
  // P = (1/2, 1/2), Q = (1/4, 3/4): KL = 1/2 ln 2 + 1/2 ln(2/3)
  const std::vector<float> p = {0.0f, 0.0f}, q = {0.0f, std::log(3.0f)};
  EXPECT_NEAR(kl_divergence(p, q), 0.5 * std::log(2.0) + 0.5 * std::log(2.0 / 3.0), 1e-7);
  EXPECT_NEAR(kl_divergence(q, p), 0.25 * std::log(0.5) + 0.75 * std::log(1.5), 1e-7);  // not symmetric
  EXPECT_EQ(kl_divergence(q, q), 0.0);
  const std::vector<float> shifted = {5.0f, 5.0f + std::log(3.0f)};
  EXPECT_NEAR(kl_divergence(q, shifted), 0.0, 1e-7);  // a constant shift is the same distribution
  EXPECT_THROW(kl_divergence(p, std::vector<float>{0.0f}), std::invalid_argument);
}

TEST(Quality, AccumulatorsAverage) {
  PerplexityAccumulator ppl;
  EXPECT_TRUE(std::isnan(ppl.perplexity()));
  const std::vector<float> uniform4(4, 0.5f);
  ppl.add(uniform4, 0);
  ppl.add(uniform4, 3);
  EXPECT_EQ(ppl.tokens(), 2);
  EXPECT_NEAR(ppl.perplexity(), 4.0, 1e-9);  // a uniform guess over 4 has perplexity 4
  const std::vector<float> sure = {0.0f, 0.0f, 50.0f, 0.0f};
  ppl.add(sure, 2);  // p ~ 1: -ln p ~ 0
  EXPECT_NEAR(ppl.perplexity(), std::exp(2.0 * std::log(4.0) / 3.0), 1e-9);

  DivergenceAccumulator div;
  EXPECT_TRUE(std::isnan(div.mean_kl()));
  const std::vector<float> p = {0.0f, 0.0f, 1.0f}, q = {0.0f, 2.0f, 1.0f};
  div.add(p, p);  // KL 0, argmax agrees
  div.add(p, q);  // argmax 2 vs 1
  EXPECT_EQ(div.positions(), 2);
  EXPECT_DOUBLE_EQ(div.mean_kl(), kl_divergence(p, q) / 2.0);
  EXPECT_GT(div.mean_kl(), 0.0);
  EXPECT_DOUBLE_EQ(div.top1_agreement(), 0.5);
}

}  // namespace
}  // namespace inferscope
