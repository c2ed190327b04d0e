// Measuring what a quantization level costs in quality: token-level perplexity of a text, and how
// far one level's next-token distributions drift from a reference level's on the same tokens.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "core/sample/logprobs.h"
#include "core/tokenizer/vocab.h"

namespace inferscope {

// A run of tokens [begin, end) that goes through the model on a fresh KV cache.
struct TokenWindow {
  int64_t begin = 0;
  int64_t end = 0;
};

// Windows of at most ctx tokens over n tokens, each starting on the previous one's last token
// (window k starts at k * (ctx - 1)): scoring every token of a window after its first scores every
// token after the first of the text exactly once. Empty when n < 2. Throws std::invalid_argument
// for ctx < 2.
std::vector<TokenWindow> perplexity_windows(int64_t n_tokens, int64_t ctx);

// KL(P || Q) = sum_i p_i (ln p_i - ln q_i) in nats, P = softmax(p_logits), Q = softmax(q_logits).
double kl_divergence(std::span<const float> p_logits, std::span<const float> q_logits);

// perplexity = exp(mean over scored tokens of -ln p(token | the tokens before it)).
class PerplexityAccumulator {
 public:
  void add(std::span<const float> logits, TokenId next);  // the logits that predict `next`
  int64_t tokens() const { return tokens_; }
  double perplexity() const;  // NaN before any token
 private:
  double nll_sum_ = 0;
  int64_t tokens_ = 0;
};

// Mean KL(P_reference || P_level) and the fraction of positions whose argmax agrees.
class DivergenceAccumulator {
 public:
  void add(std::span<const float> reference_logits, std::span<const float> logits);
  int64_t positions() const { return positions_; }
  double mean_kl() const;          // NaN before any position
  double top1_agreement() const;   // NaN before any position
 private:
  double kl_sum_ = 0;
  int64_t agree_ = 0;
  int64_t positions_ = 0;
};

}  // namespace inferscope
