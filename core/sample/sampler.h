// The sampler chain: repetition penalty -> temperature -> top-k -> top-p -> min-p -> draw.
// Temperature 0 (or top-k 1) is greedy. The same seed gives the same tokens.
#pragma once
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace inferscope {

struct SamplingParams {
  float temperature = 0.0f;      // 0 = greedy
  int32_t top_k = 0;             // 0 = off
  float top_p = 1.0f;            // 1 = off
  float min_p = 0.0f;            // 0 = off; keep tokens with p >= min_p * p_max
  float repeat_penalty = 1.0f;   // 1 = off; llama.cpp's rule: logit>0 ? logit/pen : logit*pen
  int32_t repeat_last_n = 64;    // how many recent tokens the penalty looks at
  uint64_t seed = 0xC0FFEE;
  bool ignore_eos = false;       // keep generating past end-of-generation tokens (benchmarks, as vLLM)
};

// Throws std::invalid_argument naming the first parameter out of range.
void validate_sampling(const SamplingParams& params);

// A sparse distribution over token ids: (id, probability), the probabilities summing to 1.
using TokenProbs = std::vector<std::pair<int32_t, float>>;

class Sampler {
 public:
  explicit Sampler(const SamplingParams& params);
  // Picks the next token from one row of logits; `history` is the sequence so far (prompt + output).
  // NaN logits never win; throws std::runtime_error when no logit can be drawn (all NaN or -inf).
  // Equals draw(distribution(logits, history), uniform()) (greedy consumes no randomness).
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history);
  // The distribution sample() draws from: the chain applied to one row of logits (greedy: one-hot at
  // the best penalized logit). Valid until the next call; throws as sample() does.
  const TokenProbs& distribution(std::span<const float> logits, std::span<const int32_t> history);
  // The next uniform double in [0, 1) of this sampler's seeded generator.
  double uniform();
  // Inverse-CDF draw from `probs` in their order (u in [0, 1)).
  static int32_t draw(const TokenProbs& probs, double u);
  // The probabilities the draw used at the last sample() (after every filter), sparse: (id, p).
  const TokenProbs& last_distribution() const { return candidates_; }
  const SamplingParams& params() const { return params_; }
  bool greedy() const { return params_.temperature <= 0.0f; }

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
  TokenProbs candidates_;
};

// Index of the largest value; the lowest index wins ties.
int32_t argmax(std::span<const float> logits);

}  // namespace inferscope
