// test_exactness at length (label slow: the Release pass only): the synthetic model at a 4096-token
// prompt, every way one at a time, and the demo model (30 layers, 9/3 heads of 64, a 49152-token
// vocabulary) at a chat prompt cut to 1, 255, 256, 257 and 1000 tokens, bit-identical to one prefill
// in paged blocks of 16 when computed token by token in one contiguous region, in chunks of 64 in
// blocks of 8, and preempted and recomputed in blocks of 32. The demo model's ways change several
// things at once: each alone is checked on the synthetic model at every length, and a combined way
// that matched while one of its parts broke exactness would need two rounding changes that cancel bit
// for bit at every position. Length itself is the synthetic model's to check: the demo model at 4096
// tokens took over 8 minutes here (4096 decode steps of 135M weights, then three more runs of a
// quadratic attention), a quarter of CI's time, for a property the synthetic model checks in 45 s.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/engine/prompt.h"
#include "core/model/llama_model.h"
#include "tests/support/exactness.h"
#include "tests/support/test_models.h"

namespace inferscope::test {
namespace {

constexpr int32_t kDecode = 4;

class SyntheticLongExactnessTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SyntheticLongExactnessTest, EveryWayOfComputingGivesTheSameBitsAt4096) {
  const auto model = load_synthetic_model(exactness_model_spec());
  EngineConfig base;
  base.threads = 2;
  base.attention = GetParam();
  expect_every_way_identical(*model, base, random_prompt(4096, model->config().vocab_size, 4096), kDecode, {1, 300});
}

INSTANTIATE_TEST_SUITE_P(Attention, SyntheticLongExactnessTest, ::testing::Values("flash", "naive"));

// The first n tokens of a long chat prompt (a log to summarise).
std::vector<TokenId> demo_prompt(const LlamaModel& model, int32_t n) {
  std::string log;
  for (int i = 0; log.size() < 40000; ++i) {
    log += "Entry " + std::to_string(i) +
           ": the lighthouse keeper wrote down the weather, the ships that passed and the colour of the sea. ";
  }
  std::vector<TokenId> ids = encode_chat(model, {{"user", "Summarise this log.\n" + log}});
  ids.resize(static_cast<size_t>(n));
  return ids;
}

class DemoExactnessTest : public ::testing::TestWithParam<int32_t> {};

TEST_P(DemoExactnessTest, EveryWayOfComputingGivesTheSameBits) {
  INFERSCOPE_REQUIRE_FILE(path, demo_model_path());
  const auto model = LlamaModel::load(path);
  EngineConfig base;
  base.threads = 2;
  expect_ways_identical(*model, base, demo_prompt(*model, GetParam()), kDecode,
                        {{.name = "token by token, contiguous", .chunk = 1, .contiguous = true},
                         {.name = "in steps of 64, paged blocks of 8", .chunk = 64, .block = 8},
                         {.name = "preempted and recomputed, paged blocks of 32", .block = 32, .preempted = true}});
}

INSTANTIATE_TEST_SUITE_P(ContextLengths, DemoExactnessTest, ::testing::Values(1, 255, 256, 257, 1000));

}  // namespace
}  // namespace inferscope::test
