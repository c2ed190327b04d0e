// The step-cost model (core/engine/step_cost.h): FLOPs and bytes of a step against the formulas
// written out by hand for a synthetic model, chunking and batching that change only what they should,
// and the engine's step timeline (flops, bytes, who ran) adding up to the model's count of a request.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/engine/step_cost.h"
#include "core/workload/workload_runner.h"
#include "core/model/llama_model.h"
#include "core/sched/scheduler.h"
#include "tests/support/dry_run_bench.h"
#include "tests/support/synthetic_model.h"

namespace inferscope {
namespace {

test::SyntheticModelSpec spec() {
  test::SyntheticModelSpec s;  // dim 64, 2 layers, 4 query / 2 KV heads of 16, ffn 96, vocab 48
  s.context_length = 256;
  return s;
}

const LlamaModel& model() {
  static const std::unique_ptr<LlamaModel> m = test::load_synthetic_model(spec());
  return *m;
}

constexpr size_t kKvBytesPerToken = 2 * 2 * 2 * 16 * 2;  // K and V x layers x KV heads x head dim x f16

StepCostModel cost_model() { return StepCostModel(model().config(), model().weights(), kKvBytesPerToken); }

TEST(StepCost, DecodeStepMatchesTheFormulaWrittenOut) {
  const test::SyntheticModelSpec s = spec();
  const double kv_dim = s.n_kv_heads * s.head_dim();
  const double layer_params = s.dim * s.dim + 2 * kv_dim * s.dim + s.dim * s.dim + 3.0 * s.ffn_dim * s.dim;
  const double output_params = static_cast<double>(s.vocab) * s.dim;
  const int32_t pos = 37;
  StepCost c;
  cost_model().add_sequence(c, pos, 1, 1);
  EXPECT_DOUBLE_EQ(c.matmul_flops, 2 * (s.n_layers * layer_params + output_params));
  // Each of the 4 query heads scores pos + 1 keys and sums as many values, 16 multiply-adds each.
  EXPECT_DOUBLE_EQ(c.attention_flops, 4.0 * s.head_dim() * s.n_heads * s.n_layers * (pos + 1));
  EXPECT_DOUBLE_EQ(c.kv_bytes, double{kKvBytesPerToken} * (pos + 1));
  EXPECT_DOUBLE_EQ(c.weight_bytes, s.dim * 4.0);  // the embedding row of the token (f32)
  // A whole step adds every weight matrix once: f32, so 4 bytes per parameter.
  const StepCost decode = cost_model().decode(1);
  EXPECT_DOUBLE_EQ(decode.weight_bytes, 4 * (s.n_layers * layer_params + output_params) + s.dim * 4.0);
  EXPECT_NEAR(decode.intensity(), decode.flops() / decode.bytes(), 1e-12);
}

TEST(StepCost, ChunkingAPromptChangesOnlyTheWeightReads) {
  const StepCostModel m = cost_model();
  const StepCost whole = m.prefill(100, 100), chunked = m.prefill(100, 32);
  EXPECT_DOUBLE_EQ(chunked.matmul_flops, whole.matmul_flops);
  EXPECT_DOUBLE_EQ(chunked.attention_flops, whole.attention_flops);
  // Four steps (32 + 32 + 32 + 4) read the weights four times, and each chunk its context's K/V.
  const StepCost one_step = m.decode(1);
  const double step_weights = one_step.weight_bytes - spec().dim * 4.0;
  EXPECT_DOUBLE_EQ(chunked.weight_bytes - whole.weight_bytes, 3 * step_weights);
  EXPECT_GT(chunked.kv_bytes, whole.kv_bytes);
  // Prefill is far more intense than decode: the weights are shared by every prompt token.
  EXPECT_GT(whole.intensity(), 20 * one_step.intensity());
}

TEST(StepCost, BatchedStepReadsTheWeightsOnceForEverySequence) {
  const StepCostModel m = cost_model();
  std::vector<TokenId> a(40, 1), b(9, 2);
  StepPlan plan;
  plan.seqs.push_back({0, a, 1, false, true, 0});   // a decode at position 39
  plan.seqs.push_back({1, b, 9, true, true, 0});    // a whole 9-token prompt
  const std::vector<int32_t> drafted = {3, 0};      // the decode also verifies 3 drafts
  const StepCost step = m.step(plan, drafted);
  StepCost expected;
  m.add_sequence(expected, 39, 4, 4);
  m.add_sequence(expected, 0, 9, 1);
  EXPECT_DOUBLE_EQ(step.flops(), expected.flops());
  EXPECT_DOUBLE_EQ(step.kv_bytes, expected.kv_bytes);
  EXPECT_DOUBLE_EQ(step.weight_bytes - expected.weight_bytes, m.decode(1).weight_bytes - spec().dim * 4.0);
  EXPECT_DOUBLE_EQ(m.step(StepPlan{}, {}).bytes(), 0);
}

TEST(StepCost, EngineStepTimelineAddsUpToTheRequestsCost) {
  EngineConfig config;
  config.scheduler.max_batch_tokens = 16;
  WorkloadRunOptions options;
  options.dry_run = DryRunCost{0.01, 0.001};
  Request r;
  r.tokens.assign(40, 5);
  r.prompt_tokens = 40;
  r.max_output_tokens = 6;
  const WorkloadResult result = run_workload(model(), config, {r}, options);
  double flops = 0, weight_bytes = 0, kv_bytes = 0;
  int32_t prefill = 0, decode = 0;
  for (const StepMetrics& st : result.metrics.steps) {
    flops += st.flops;
    weight_bytes += st.weight_bytes_read;
    kv_bytes += st.kv_bytes_read;
    ASSERT_EQ(st.sequences.size(), 1u);
    EXPECT_EQ(st.sequences[0].id, r.id);
    EXPECT_EQ(st.sequences[0].prefill_tokens, st.prefill_tokens);
    EXPECT_EQ(st.sequences[0].decode_tokens, st.decode_tokens);
    prefill += st.prefill_tokens;
    decode += st.decode_tokens;
  }
  EXPECT_EQ(prefill, 40);
  EXPECT_EQ(decode, 5);  // the last sampled token is never fed back
  // The prompt in chunks of 16, then decodes at positions 40..44.
  const StepCostModel m(model().config(), model().weights(), kKvBytesPerToken);
  StepCost expected = m.prefill(40, 16);
  const StepCost to45 = m.decode(45), to40 = m.decode(40);
  EXPECT_NEAR(flops, expected.flops() + to45.flops() - to40.flops(), 1e-9 * flops);
  EXPECT_NEAR(weight_bytes, expected.weight_bytes + to45.weight_bytes - to40.weight_bytes, 1e-9 * weight_bytes);
  EXPECT_NEAR(kv_bytes, expected.kv_bytes + to45.kv_bytes - to40.kv_bytes, 1e-9 * kv_bytes);
  EXPECT_NEAR(result.summary.flops, flops, 1e-9 * flops);
}

}  // namespace
}  // namespace inferscope
