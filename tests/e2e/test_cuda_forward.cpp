// The CUDA forward pass through the whole engine against the CPU's: greedy text of stories260K and of
// the demo model, top-1 identical at every step (after a one-token prompt, a short one through the
// GEMV and a long one through the cuBLAS prefill GEMM); and decode steps replayed from CUDA graphs
// against the same steps uncaptured, bit for bit. Skips, naming why, where no CUDA device runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "core/attention/flash_attention.h"
#include "core/cuda/cuda_forward.h"
#include "core/engine/prompt.h"
#include "core/kv/kv_config.h"
#include "core/model/llama_model.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/support/cuda_device.h"
#include "tests/support/engine_runs.h"
#include "tests/support/synthetic_model.h"
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

// A prompt of more than 8 tokens is prefilled through the cuBLAS GEMM (f16 inputs): greedy top-1
// still agrees with the CPU's at every step.
TEST(CudaForward, DemoModelGreedyAfterAGemmPrefillMatchesTheCpu) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const auto model = LlamaModel::load(path);
  const std::vector<TokenId> prompt =
      encode_prompt(*model, "The three largest cities of France, from the largest to the smallest, are Paris,");
  ASSERT_GT(prompt.size(), static_cast<size_t>(gpu::kGemvMaxTokens));
  expect_same_greedy(*model, prompt, 32, 8);
}

// One CudaForward over its own paged cache, graphs on or off.
struct GraphSide {
  GraphSide(const LlamaModel& model, bool graphs)
      : kv(make_kv_cache(model.kv_geometry(DType::F16),
                         KvConfig{.kind = KvKind::Paged, .block_size = 16,
                                  .budget_bytes = model.kv_geometry(DType::F16).bytes_per_token() * 4096})),
        forward(model, model.weights(), MatmulOptions{}, 0) {
    forward.set_cuda_graphs(graphs);
  }
  // One step (cache room allocated first); the logits.
  std::vector<float> run(const std::vector<BatchSeq>& batch) {
    for (const BatchSeq& b : batch) EXPECT_TRUE(kv->allocate(b.seq, static_cast<int32_t>(b.tokens.size())));
    std::vector<float> logits;
    forward.run(batch, *kv, attention, pool, logits);
    return logits;
  }
  std::unique_ptr<KvCache> kv;
  FlashAttention attention;
  ThreadPool pool{1};
  CudaForward forward;
};

// Decode steps replayed from CUDA graphs give the uncaptured steps' logits bit for bit: a batch of
// three sequences of different lengths, one crossing a 16-token block boundary and one crossing the
// decode kernel's 512-position split boundary (a new graph), with a step of two between.
TEST(CudaForward, DecodeGraphsGiveTheUncapturedLogitsBitForBit) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  test::SyntheticModelSpec spec;
  spec.dim = 128;
  spec.n_heads = 2;  // head_dim 64, a size the CUDA attention kernels take
  spec.n_kv_heads = 1;
  spec.ffn_dim = 256;
  spec.n_layers = 3;
  spec.vocab = 96;
  spec.context_length = 1024;
  spec.weight_dtype = DType::Q4_1;
  const auto model = test::load_synthetic_model(spec);
  GraphSide with(*model, true), without(*model, false);
  const auto token = [&](int i) { return static_cast<TokenId>(3 + i % (spec.vocab - 3)); };
  // prompts of 14, 5 and 509 tokens, each prefilled on its own
  const std::vector<int32_t> prompt_lengths = {14, 5, 509};
  std::vector<std::vector<TokenId>> prompts;
  for (size_t s = 0; s < prompt_lengths.size(); ++s) {
    std::vector<TokenId> p;
    for (int32_t i = 0; i < prompt_lengths[s]; ++i) p.push_back(token(i * 5 + static_cast<int>(s)));
    prompts.push_back(p);
    const std::vector<BatchSeq> prefill = {{static_cast<SeqId>(s), prompts.back(), 0, false}};
    ASSERT_EQ(std::memcmp(with.run(prefill).data(), without.run(prefill).data(), spec.vocab * sizeof(float)), 0)
        << "prefill of sequence " << s;
  }
  std::vector<int32_t> length = prompt_lengths;
  std::vector<std::vector<TokenId>> step_tokens(prompt_lengths.size());
  for (int step = 0; step < 8; ++step) {
    // step 4 leaves sequence 1 out (a batch of two); every other step has all three
    std::vector<BatchSeq> batch;
    for (size_t s = 0; s < prompt_lengths.size(); ++s) {
      if (step == 4 && s == 1) continue;
      step_tokens[s] = {token(step * 11 + static_cast<int>(s))};
      batch.push_back(BatchSeq{static_cast<SeqId>(s), step_tokens[s], length[s], false});
      ++length[s];
    }
    const std::vector<float> a = with.run(batch), b = without.run(batch);
    ASSERT_EQ(a.size(), batch.size() * static_cast<size_t>(spec.vocab));
    ASSERT_EQ(b.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(std::memcmp(&a[i], &b[i], sizeof(float)), 0)
          << "step " << step << ", logit " << i << ": " << a[i] << " with graphs, " << b[i] << " without";
    }
  }
  EXPECT_GT(length[0], 16) << "sequence 0 crossed a block boundary";
  EXPECT_GT(length[2], 512) << "sequence 2 crossed a split boundary";
  // a shape's second step is captured, its later ones replay: three at one split (run, capture,
  // replay), then three at two splits around the batch of two (run, capture, replay, replay)
  EXPECT_EQ(with.forward.graph_captures(), 2u);
  EXPECT_EQ(with.forward.graph_replays(), 3u);
  EXPECT_EQ(without.forward.graph_captures(), 0u);
}

}  // namespace
}  // namespace inferscope
