// Text perplexity through the engine (core/workload/text_perplexity.h) against the same sums written
// out by hand over the engine's logits: llama-perplexity's method (chunks with BOS first, the second
// half scored) and the all-tokens method.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/workload/text_perplexity.h"
#include "core/model/llama_model.h"
#include "tests/support/engine_runs.h"
#include "tests/support/logit_compare.h"
#include "tests/support/synthetic_model.h"

namespace inferscope::test {
namespace {

// -ln softmax(row)[token], in double.
double nll(std::span<const float> row, TokenId token) {
  double max = row[0];
  for (float v : row) max = std::max(max, static_cast<double>(v));
  double sum = 0;
  for (float v : row) sum += std::exp(v - max);
  return -(row[static_cast<size_t>(token)] - max - std::log(sum));
}

class TextPerplexityByHand : public ::testing::Test {
 protected:
  void SetUp() override {
    model = load_synthetic_model(SyntheticModelSpec{});
    tokens = random_tokens(19, model->config().vocab_size, 7, 3);
    tokens[0] = model->tokenizer().vocab().bos;
  }
  // The mean NLL of the positions first .. size-2 of `window`, each scoring the next token.
  double window_nll_sum(const std::vector<TokenId>& window, size_t first, int64_t& scored) const {
    const std::vector<float> logits = engine_logits(*model, EngineConfig{}, window);
    const auto vocab = static_cast<size_t>(model->config().vocab_size);
    double sum = 0;
    for (size_t i = first; i + 1 < window.size(); ++i, ++scored) {
      sum += nll(std::span<const float>(logits).subspan(i * vocab, vocab), window[i + 1]);
    }
    return sum;
  }
  std::unique_ptr<LlamaModel> model;
  std::vector<TokenId> tokens;
};

TEST_F(TextPerplexityByHand, LlamaCppMethod) {
  ASSERT_TRUE(model->tokenizer().vocab().add_bos);
  // 19 tokens, ctx 8: chunks [0, 8) and [8, 16) (3 dropped), each with BOS first, positions 4..6 scored.
  double sum = 0;
  int64_t scored = 0;
  for (size_t begin : {0, 8}) {
    std::vector<TokenId> chunk(tokens.begin() + static_cast<ptrdiff_t>(begin), tokens.begin() + static_cast<ptrdiff_t>(begin) + 8);
    chunk[0] = model->tokenizer().vocab().bos;
    sum += window_nll_sum(chunk, 4, scored);
  }
  const TextPerplexity r = measure_text_perplexity(*model, EngineConfig{}, tokens, 8, std::nullopt, {}, PerplexityMethod::LlamaCpp);
  EXPECT_EQ(r.method, PerplexityMethod::LlamaCpp);
  EXPECT_EQ(r.tokens, 6);
  EXPECT_EQ(scored, 6);
  EXPECT_EQ(r.windows, 2u);
  // the same logits, summed in another order: double rounding only
  EXPECT_NEAR(r.level.perplexity, std::exp(sum / 6), 1e-12 * std::exp(sum / 6));
}

TEST_F(TextPerplexityByHand, AllTokensMethod) {
  // ctx 8 over 19 tokens: windows [0, 8), [7, 15), [14, 19); every token after the first scored once.
  double sum = 0;
  int64_t scored = 0;
  for (size_t begin : {0, 7, 14}) {
    const size_t end = std::min<size_t>(begin + 8, tokens.size());
    sum += window_nll_sum(std::vector<TokenId>(tokens.begin() + static_cast<ptrdiff_t>(begin),
                                               tokens.begin() + static_cast<ptrdiff_t>(end)),
                          0, scored);
  }
  const TextPerplexity r = measure_text_perplexity(*model, EngineConfig{}, tokens, 8);
  EXPECT_EQ(r.tokens, 18);
  EXPECT_EQ(scored, 18);
  EXPECT_NEAR(r.level.perplexity, std::exp(sum / 18), 1e-12 * std::exp(sum / 18));
  EXPECT_THROW(measure_text_perplexity(*model, EngineConfig{}, std::span(tokens).first(7), 8, std::nullopt, {},
                                       PerplexityMethod::LlamaCpp),
               std::invalid_argument);
}

}  // namespace
}  // namespace inferscope::test
