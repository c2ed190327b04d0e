// Exact at every context length: a request's logits at every position are bit-identical however
// the engine computes them (one prefill, token by token, prompt chunks of several sizes, paged
// blocks of 8/16/32 or one contiguous region, preempted and recomputed), at prompts of 1, 255, 256,
// 257 and 1000 tokens (the flash split-K chunk is 256 keys), for both attention implementations,
// on a synthetic model. test_exactness_long (label slow) adds 4096 tokens and the demo model.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/model/llama_model.h"
#include "tests/support/exactness.h"

namespace inferscope::test {
namespace {

class ExactnessTest : public ::testing::TestWithParam<std::tuple<int32_t, const char*>> {};

TEST_P(ExactnessTest, EveryWayOfComputingGivesTheSameBits) {
  const auto [n, attention] = GetParam();
  const auto model = load_synthetic_model(exactness_model_spec());
  EngineConfig base;
  base.threads = 2;
  base.attention = attention;
  const std::vector<TokenId> prompt = random_prompt(n, model->config().vocab_size, static_cast<uint32_t>(n));
  expect_every_way_identical(*model, base, prompt, 4, {1, 7, 64, 300});
}

INSTANTIATE_TEST_SUITE_P(ContextLengths, ExactnessTest,
                         ::testing::Combine(::testing::Values(1, 255, 256, 257, 1000),
                                            ::testing::Values("flash", "naive")),
                         [](const auto& test_info) {
                           return std::get<1>(test_info.param) + std::string("_") + std::to_string(std::get<0>(test_info.param));
                         });

}  // namespace
}  // namespace inferscope::test
