// The CUDA forward pass through the whole engine against the CPU's: greedy text of stories260K and of
// the demo model, top-1 identical at every step. Skips, naming why, where no CUDA device runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/engine/prompt.h"
#include "core/model/llama_model.h"
#include "tests/support/cuda_device.h"
#include "tests/support/engine_runs.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

// Greedy output on the CPU and on CUDA device 0 from the same prompt; each step's top-1 must agree.
void expect_same_greedy(const LlamaModel& model, const std::vector<TokenId>& prompt, int32_t n, int32_t at_least) {
  EngineConfig cpu;
  EngineConfig cuda = cpu;
  cuda.device = ComputeDevice{true, 0};
  const test::GreedyRun a = test::engine_greedy_with_logits(model, cpu, prompt, n);
  const test::GreedyRun b = test::engine_greedy_with_logits(model, cuda, prompt, n);
  ASSERT_EQ(b.outcome.reason == StopReason::Failed ? b.outcome.error : "", "");
  ASSERT_GE(a.outcome.tokens.size(), static_cast<size_t>(at_least)) << "the CPU's text is too short to compare";
  const size_t steps = std::min(a.rows.size(), b.rows.size());
  for (size_t i = 0; i < steps; ++i) {
    const auto top1 = [](const std::vector<float>& row) { return std::max_element(row.begin(), row.end()) - row.begin(); };
    float max_diff = 0;
    for (size_t j = 0; j < a.rows[i].size(); ++j) max_diff = std::max(max_diff, std::abs(a.rows[i][j] - b.rows[i][j]));
    ASSERT_EQ(top1(a.rows[i]), top1(b.rows[i])) << "first divergence at step " << i << " (max logit difference "
                                                << max_diff << ")";
  }
  EXPECT_EQ(a.outcome.tokens, b.outcome.tokens);
}

TEST(CudaForward, Stories260KGreedyMatchesTheCpu) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  expect_same_greedy(*model, encode_prompt(*model, ""), 80, 64);
}

TEST(CudaForward, DemoModelGreedyMatchesTheCpu) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const auto model = LlamaModel::load(path);
  expect_same_greedy(*model, encode_prompt(*model, "The capital of France is"), 64, 8);
}

}  // namespace
}  // namespace inferscope
