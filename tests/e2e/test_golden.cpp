// Real models, real text: stories260K's published greedy output and the demo model's chat answer.
#include <gtest/gtest.h>

#include "core/engine/prompt.h"
#include "core/engine/sync_engine.h"
#include "core/model/llama_model.h"
#include "core/sample/sampler.h"
#include "tests/support/engine_runs.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

// tests/models/README.md: the first 32 ids generated greedily from BOS.
const std::vector<TokenId> kStoriesGolden = {403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315,
                                             421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408,
                                             419, 292, 411, 322, 265, 282, 295, 433, 426, 385};

struct KvChoice {
  KvKind kind;
  int32_t block_size;
};

RequestOutcome greedy(const LlamaModel& model, const std::vector<TokenId>& prompt, int32_t n, DType kv_dtype,
                      int32_t threads, KvChoice kv = {KvKind::Paged, 16}) {
  EngineConfig config;
  config.kv_dtype = kv_dtype;
  config.threads = threads;
  config.kv.kind = kv.kind;
  config.kv.block_size = kv.block_size;
  return test::engine_greedy(model, config, prompt, n);
}

class StoriesGolden : public ::testing::TestWithParam<std::tuple<DType, int32_t>> {};

TEST_P(StoriesGolden, GreedyFromBosMatchesPublishedIds) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  const auto [kv_dtype, threads] = GetParam();
  const RequestOutcome r = greedy(*model, encode_prompt(*model, ""), 32, kv_dtype, threads);
  EXPECT_EQ(r.tokens, kStoriesGolden);
  EXPECT_EQ(r.text.rfind("Once upon a time, there was a little girl named Lily.", 0), 0u) << r.text;
}

INSTANTIATE_TEST_SUITE_P(KvDtypesAndThreads, StoriesGolden,
                         ::testing::Combine(::testing::Values(DType::F16, DType::F32), ::testing::Values(1, 2)));

TEST(StoriesGolden, LongerRunMatchesTheDocumentedStory) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  const RequestOutcome r = greedy(*model, encode_prompt(*model, ""), 100, DType::F16, 0);
  EXPECT_EQ(r.text.rfind("Once upon a time, there was a little girl named Lily. She loved to play outside in the "
                         "park. One",
                         0),
            0u)
      << r.text;
}

// Greedy output is the same token for token whichever KV manager and block size hold the cache.
class StoriesAcrossKvManagers : public ::testing::TestWithParam<KvChoice> {};

TEST_P(StoriesAcrossKvManagers, GreedyIdsMatchGolden) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  const RequestOutcome r = greedy(*model, encode_prompt(*model, ""), 32, DType::F16, 2, GetParam());
  EXPECT_EQ(r.tokens, kStoriesGolden);
}

INSTANTIATE_TEST_SUITE_P(PagedAndContiguous, StoriesAcrossKvManagers,
                         ::testing::Values(KvChoice{KvKind::Paged, 8}, KvChoice{KvKind::Paged, 16},
                                           KvChoice{KvKind::Paged, 32}, KvChoice{KvKind::Contiguous, 0}));

TEST(StoriesPrefixCache, ReattachedPrefixGivesIdenticalLogits) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  EngineConfig config;
  config.kv.block_size = 8;
  SyncEngine engine(*model, config);
  const std::vector<TokenId> prompt = model->tokenizer().encode(
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the park.", true);
  ASSERT_GT(prompt.size(), 16u);
  // the logits of the prompt's last position, as a request samples its first token from them
  auto first_token_logits = [&] {
    EngineRequest r;
    r.prompt_tokens = prompt;
    r.max_tokens = 1;
    r.logits = LogitsOutput::Sampled;
    std::vector<float> row;
    engine.run(std::move(r), {}, [&](RequestId, int32_t, std::span<const float> l) { row.assign(l.begin(), l.end()); });
    return row;
  };
  const std::vector<float> first = first_token_logits();  // its full blocks stay in the prefix cache
  const std::vector<float> second = first_token_logits();
  EXPECT_TRUE(test::bit_identical(first, second));
  // Whole blocks are reused, leaving at least the last token to compute.
  const EngineMetricsSnapshot m = engine.core().metrics().snapshot(engine.core().now());
  EXPECT_EQ(m.prefix_cache_hits, static_cast<int64_t>((prompt.size() - 1) / 8 * 8));
  EXPECT_EQ(m.prefix_cache_queries, static_cast<int64_t>(2 * prompt.size()));
}

TEST(DemoModel, AnswersTheCapitalOfFrance) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const auto model = LlamaModel::load(path);
  const std::vector<TokenId> prompt = encode_chat(*model, {{"user", "What is the capital of France?"}});
  const RequestOutcome r = greedy(*model, prompt, 48, DType::F16, 0);
  EXPECT_NE(r.text.find("Paris"), std::string::npos) << r.text;
}

}  // namespace
}  // namespace inferscope
