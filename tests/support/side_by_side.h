// Two runtimes of one model (different attention, KV dtype...) decoding side by side: both are fed
// the prompt, then each greedy choice of the first, so every step compares logits of the same tokens.
#pragma once
#include <algorithm>
#include <cmath>
#include <functional>
#include <span>
#include <vector>

#include "core/engine/runtime.h"
#include "core/model/llama_model.h"
#include "core/sample/sampler.h"

namespace inferscope::test {

struct StepDiff {
  float max_abs = 0.0f;   // the first runtime's largest |logit|
  float max_diff = 0.0f;  // the largest |difference| between the two runtimes' logits
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

// Up to n steps on sequence 0 of both, stopping after an end-of-generation token or at the context's end.
inline std::vector<StepDiff> decode_side_by_side(const LlamaModel& model, Runtime& first, Runtime& second,
                                                 const std::vector<TokenId>& prompt, int32_t n) {
  std::vector<StepDiff> steps;
  std::vector<TokenId> feed = prompt;
  for (int32_t step = 0; step < n; ++step) {
    const std::span<const float> a = first.append(0, feed);
    const std::vector<float> want(a.begin(), a.end());
    const std::span<const float> b = second.append(0, feed);
    StepDiff d;
    for (size_t i = 0; i < want.size(); ++i) {
      d.max_abs = std::max(d.max_abs, std::fabs(want[i]));
      d.max_diff = std::max(d.max_diff, std::fabs(want[i] - b[i]));
    }
    d.first_choice = argmax(want);
    d.second_choice = argmax(b);
    d.first_gap = top2_gap(want);
    d.second_gap = top2_gap(b);
    steps.push_back(d);
    if (model.tokenizer().vocab().is_eog(d.first_choice) || first.length(0) + 1 >= first.context_length()) break;
    feed = {d.first_choice};
  }
  return steps;
}

}  // namespace inferscope::test
