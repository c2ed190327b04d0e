// Two engine configurations of one model (different attention, KV dtype...) side by side: the first
// decodes greedily; both then compute the logits of the prompt and those tokens, so every step
// compares logits of the same tokens.
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <span>
#include <vector>

#include "tests/support/engine_runs.h"
#include "core/model/llama_model.h"
#include "core/sample/sampler.h"

namespace inferscope::test {

struct StepDiff {
  float max_abs = 0.0f;   // the first configuration's largest |logit|
  float max_diff = 0.0f;  // the largest |difference| between the two configurations' logits
  TokenId first_choice = 0, second_choice = 0;  // each one's greedy token
  float first_gap = 0.0f, second_gap = 0.0f;    // each one's top-2 gap: how close it came to another choice
  float relative() const { return max_diff / max_abs; }
};

// The two largest logits' gap.
inline float top2_gap(std::span<const float> logits) {
  std::vector<float> v(logits.begin(), logits.end());
  std::partial_sort(v.begin(), v.begin() + 2, v.end(), std::greater<float>());
  return v[0] - v[1];
}

// Up to n greedy steps of the first configuration, stopping after an end-of-generation token.
inline std::vector<StepDiff> decode_side_by_side(const LlamaModel& model, const EngineConfig& first,
                                                 const EngineConfig& second, const std::vector<TokenId>& prompt,
                                                 int32_t n) {
  const RequestOutcome greedy = engine_greedy(model, first, prompt, n);
  std::vector<TokenId> sequence = prompt;
  sequence.insert(sequence.end(), greedy.tokens.begin(), greedy.tokens.end());
  const std::vector<float> a = engine_logits(model, first, sequence), b = engine_logits(model, second, sequence);
  const auto vocab = static_cast<size_t>(model.config().vocab_size);
  // one step per sampled token: each output token, and the end-of-generation token if one came
  const size_t n_steps = greedy.tokens.size() + (greedy.reason == StopReason::EndOfGeneration ? 1 : 0);
  std::vector<StepDiff> steps;
  for (size_t step = 0; step < n_steps; ++step) {
    const size_t row = (prompt.size() - 1 + step) * vocab;
    const std::span<const float> want(a.data() + row, vocab), got(b.data() + row, vocab);
    StepDiff d;
    for (size_t i = 0; i < vocab; ++i) {
      d.max_abs = std::max(d.max_abs, std::fabs(want[i]));
      d.max_diff = std::max(d.max_diff, std::fabs(want[i] - got[i]));
    }
    d.first_choice = argmax(want);
    d.second_choice = argmax(got);
    d.first_gap = top2_gap(want);
    d.second_gap = top2_gap(got);
    steps.push_back(d);
  }
  return steps;
}

}  // namespace inferscope::test
