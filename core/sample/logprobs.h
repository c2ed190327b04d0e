// Log-probabilities of the model's raw next-token distribution, softmax(logits), in double: what
// generate --logprobs prints (OpenAI's logprobs/top_logprobs) and what perplexity scores.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace inferscope {

// ln sum_i exp(x_i), shifted by the maximum so nothing overflows.
double log_sum_exp(std::span<const float> logits);
// ln p(target) under softmax(logits). Throws std::invalid_argument for a target outside the logits.
double log_probability(std::span<const float> logits, int32_t target);

struct TokenLogprob {
  int32_t id = 0;
  double logprob = 0;
};
// The k most likely tokens, most likely first (the lower id first on a tie).
std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, int32_t k);

}  // namespace inferscope
