// Naive and flash attention compute the same function with different rounding: on real models their
// logits agree to a stated tolerance at every step, and greedy text is identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/engine/prompt.h"
#include "core/engine/runtime.h"
#include "core/model/llama_model.h"
#include "core/sample/sampler.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

// The two largest logits' gap: how close a greedy step came to choosing differently.
float top2_gap(std::span<const float> logits) {
  std::vector<float> v(logits.begin(), logits.end());
  std::partial_sort(v.begin(), v.begin() + 2, v.end(), std::greater<float>());
  return v[0] - v[1];
}

// Decodes `n` greedy tokens after `prompt` with naive and flash attention side by side, feeding both
// the naive choice; checks logits agree within `tolerance` x the step's largest |logit| and that
// flash picks the same token (reporting the top-2 gap if it ever does not).
void expect_same_greedy(const LlamaModel& model, const std::vector<TokenId>& prompt, int32_t n, float tolerance) {
  RuntimeOptions naive_options, flash_options;
  naive_options.attention = "naive";
  flash_options.attention = "flash";
  Runtime naive(model, naive_options), flash(model, flash_options);
  std::vector<TokenId> feed = prompt;
  float worst = 0.0f;
  for (int32_t step = 0; step < n; ++step) {
    const std::span<const float> a = naive.append(0, feed);
    const std::vector<float> naive_logits(a.begin(), a.end());
    const std::span<const float> b = flash.append(0, feed);
    float max_abs = 0.0f, max_diff = 0.0f;
    for (size_t i = 0; i < naive_logits.size(); ++i) {
      max_abs = std::max(max_abs, std::fabs(naive_logits[i]));
      max_diff = std::max(max_diff, std::fabs(naive_logits[i] - b[i]));
    }
    worst = std::max(worst, max_diff / max_abs);
    ASSERT_LE(max_diff, tolerance * max_abs) << "step " << step;
    const TokenId want = argmax(naive_logits), got = argmax(b);
    ASSERT_EQ(got, want) << "greedy diverged at step " << step << "; naive top-2 gap " << top2_gap(naive_logits)
                         << ", flash top-2 gap " << top2_gap(b);
    if (model.tokenizer().vocab().is_eog(want) || naive.length(0) + 1 >= naive.context_length()) break;
    feed = {want};
  }
  ::testing::Test::RecordProperty("worst_relative_logit_difference", std::to_string(worst));
}

// Each attention output differs by ~1e-6 relative between the two summation orders; 5 to 30 layers
// amplify that to at most ~4e-4 of the largest logit (measured: stories 1.4e-4, demo 3.8e-4). A wrong
// mask, scale or merge moves logits by whole units (> 1e-2 relative).
constexpr float kLogitTolerance = 2e-3f;

TEST(AttentionOnModels, StoriesNaiveAndFlashAgreeFor200Tokens) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  expect_same_greedy(*model, encode_prompt(*model, ""), 200, kLogitTolerance);
}

TEST(AttentionOnModels, DemoChatNaiveAndFlashAgreeFor64Tokens) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const auto model = LlamaModel::load(path);
  const std::vector<TokenId> prompt =
      encode_chat(*model, {{"user", "Write a short poem about the sea, then explain what a tide is."}});
  expect_same_greedy(*model, prompt, 64, kLogitTolerance);
}

}  // namespace
}  // namespace inferscope
