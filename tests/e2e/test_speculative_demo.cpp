// Speculative decoding on the demo model (label slow: four proposers over a 135M model): a chat
// answer with speculation is token for token, and logit for logit, the target's alone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/engine/prompt.h"
#include "core/engine/sync_engine.h"
#include "core/model/llama_model.h"
#include "tests/support/engine_runs.h"
#include "tests/support/test_models.h"

namespace inferscope::test {
namespace {


TEST(SpeculativeDemo, ChatGreedyIsTheTargetsAloneForEveryProposer) {
  INFERSCOPE_REQUIRE_FILE(path, demo_model_path());
  const auto model = LlamaModel::load(path);
  const std::vector<TokenId> prompt =
      encode_chat(*model, {{"user", "Rewrite this line with the variable renamed to total: int sum = a + b; return sum;"}});
  EngineConfig plain;
  plain.threads = 2;
  const GreedyRun want = engine_greedy_with_logits(*model, plain, prompt, 48);
  SpecConfig ngram;
  ngram.mode = SpecMode::Ngram;
  SpecConfig draft;  // the demo file as its own draft: every draft token is accepted
  draft.mode = SpecMode::Draft;
  draft.draft_model = path;
  SpecConfig self_quant;  // the stored Q4_1 re-rounded to Q4_0: fewer bytes
  self_quant.mode = SpecMode::SelfQuant;
  self_quant.draft_quant = WeightQuant::Q4;
  SpecConfig early_exit;
  early_exit.mode = SpecMode::EarlyExit;
  early_exit.draft_layers = 20;
  for (const SpecConfig& spec : {ngram, draft, self_quant, early_exit}) {
    EngineConfig c = plain;
    c.spec = spec;
    const GreedyRun got = engine_greedy_with_logits(*model, c, prompt, 48);
    EXPECT_EQ(got.outcome.tokens, want.outcome.tokens) << describe_spec(spec);
    ASSERT_EQ(got.rows.size(), want.rows.size()) << describe_spec(spec);
    for (size_t i = 0; i < want.rows.size(); ++i) {
      ASSERT_TRUE(bit_identical(got.rows[i], want.rows[i])) << describe_spec(spec) << " row " << i;
    }
    if (spec.mode == SpecMode::Draft) {
      EXPECT_DOUBLE_EQ(got.outcome.metrics.spec.acceptance_rate(), 1.0);
    }
  }
}

}  // namespace
}  // namespace inferscope::test
