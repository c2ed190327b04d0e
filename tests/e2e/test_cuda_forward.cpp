// The CUDA forward pass through the whole engine against the CPU's: greedy text of stories260K (f32,
// converted to q8_0 and q4_0, on a contiguous and an f32 KV cache) and of the demo model, top-1
// identical at every step (after a one-token prompt, a short one through the GEMV and a long one
// through the cuBLAS prefill GEMM). On a small random-weight model, all bit for bit: a forked
// sequence's copy-on-write replayed on the device, the exactness CUDA keeps (verify rows are decode
// rows, a decode row ignores a prefill beside it), and decode steps replayed from CUDA graphs against
// the same steps uncaptured. Skips, naming why, where no CUDA device runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/attention/flash_attention.h"
#include "core/cuda/cuda_forward.h"
#include "core/engine/prompt.h"
#include "core/kv/kv_config.h"
#include "core/model/llama_model.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/support/cuda_device.h"
#include "tests/support/engine_runs.h"
#include "tests/support/exactness.h"
#include "tests/support/synthetic_model.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

// Greedy output on the CPU and on CUDA device 0 from the same prompt, both with `cpu`'s settings
// otherwise; each step's top-1 must agree.
void expect_same_greedy(const LlamaModel& model, const std::vector<TokenId>& prompt, int32_t n, int32_t at_least,
                        const EngineConfig& cpu = {}) {
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

// The kernels cover the steps of forward_recipe() they list and the head sizes they are built for; a
// model with another step or head size is refused at load, named, before any device is touched (so
// this runs without one).
TEST(CudaForward, AModelWithAStepTheKernelsLackIsRefusedByName) {
  const auto refusal = [](const test::SyntheticModelSpec& spec) {
    const auto model = test::load_synthetic_model(spec);
    try {
      CudaForward forward(*model, model->weights(), ForwardOptions{}, 0);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  test::SyntheticModelSpec qwen2;
  qwen2.architecture = "qwen2";
  qwen2.dim = 64, qwen2.n_heads = 4, qwen2.n_kv_heads = 2, qwen2.ffn_dim = 96, qwen2.vocab = 43;
  EXPECT_EQ(refusal(qwen2),
            "--device cuda: the CUDA forward pass does not support Q/K/V biases (model qwen2) yet; use --device cpu");
  test::SyntheticModelSpec gemma3;
  gemma3.architecture = "gemma3";
  gemma3.dim = 64, gemma3.n_heads = 4, gemma3.n_kv_heads = 2, gemma3.key_length = 32, gemma3.ffn_dim = 96;
  gemma3.vocab = 41, gemma3.tied_output = true;
  EXPECT_EQ(refusal(gemma3),
            "--device cuda: the CUDA forward pass does not support scaled embeddings (model gemma3) yet; use --device cpu");
  // a head size the attention kernels are not built for: at load, not at the first step
  test::SyntheticModelSpec heads32;
  heads32.dim = 128, heads32.n_heads = 4, heads32.n_kv_heads = 2, heads32.ffn_dim = 96, heads32.vocab = 43;
  EXPECT_EQ(refusal(heads32), "--device cuda: the CUDA forward pass does not support attention heads of 32 dimensions "
                              "(model llama) yet; use --device cpu");
}

TEST(CudaForward, Stories260KGreedyMatchesTheCpu) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  expect_same_greedy(*model, encode_prompt(*model, ""), 80, 64);
}

// stories260K's f32 weights converted to q8_0 and q4_0, so the quantized GEMVs inside a model run, after
// a prompt long enough for the cuBLAS prefill: top-1 agrees with the CPU's at every step.
TEST(CudaForward, Stories260KQuantizedGreedyAfterAGemmPrefillMatchesTheCpu) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  const std::vector<TokenId> prompt = encode_prompt(*model, "Once upon a time, there was a little girl named Lily. She");
  ASSERT_GT(prompt.size(), static_cast<size_t>(gpu::kGemvMaxTokens));
  for (WeightQuant quant : {WeightQuant::Q8, WeightQuant::Q4}) {
    SCOPED_TRACE(std::string(weight_quant_name(quant)));
    EngineConfig config;
    config.quant = quant;
    expect_same_greedy(*model, prompt, 48, 16, config);
  }
}

// The contiguous cache and an f32 KV cache, which the CUDA pass mirrors as it does the paged f16 one.
TEST(CudaForward, Stories260KOnAContiguousF32CacheMatchesTheCpu) {
  INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  const std::vector<TokenId> prompt = encode_prompt(*model, "Once upon a time, there was a little girl named Lily. She");
  for (KvKind kind : {KvKind::Contiguous, KvKind::Paged}) {
    EngineConfig config;
    config.kv.kind = kind;
    config.kv_dtype = DType::F32;
    SCOPED_TRACE(kind == KvKind::Contiguous ? "contiguous f32" : "paged f32");
    expect_same_greedy(*model, prompt, 48, 16, config);
  }
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
struct CudaSide {
  CudaSide(const LlamaModel& model, bool graphs)
      : kv(make_kv_cache(model.kv_geometry(DType::F16),
                         KvConfig{.kind = KvKind::Paged, .block_size = 16,
                                  .budget_bytes = model.kv_geometry(DType::F16).bytes_per_token() * 4096})),
        forward(model, model.weights(), ForwardOptions{}, 0) {
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

// Rows [row, row + n) of `logits` (vocab wide) against `want`, bit for bit.
void expect_rows_bitwise(const std::vector<float>& logits, size_t row, const std::vector<float>& want, int32_t vocab,
                         const std::string& what) {
  ASSERT_LE((row * vocab) + want.size(), logits.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(std::memcmp(&logits[row * vocab + i], &want[i], sizeof(float)), 0)
        << what << ", logit " << i << ": " << logits[row * vocab + i] << " vs " << want[i];
  }
}

// The exactness suites' random-weight model (head size 64, GQA 2:1) with Q4_1 weights, as the demo's.
class CudaSmallModel : public ::testing::Test {
 protected:
  void SetUp() override {
    INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE();
    spec_.weight_dtype = DType::Q4_1;
    model_ = test::load_synthetic_model(spec_);
  }
  // `prompt` from position 0 as one step on both sides: the same logits, and so the same cached K/V.
  void prefill_both(CudaSide& a, CudaSide& b, SeqId seq, const std::vector<TokenId>& prompt) const {
    const std::vector<BatchSeq> step = {{seq, prompt, 0, false}};
    expect_rows_bitwise(a.run(step), 0, b.run(step), spec_.vocab, "prefill of sequence " + std::to_string(seq));
  }

  test::SyntheticModelSpec spec_ = test::exactness_model_spec();
  std::unique_ptr<LlamaModel> model_;
};

// Exactness on CUDA holds between decode and verify: k tokens verified in one step (all logits)
// give, row for row, the bits of the same tokens decoded one at a time.
TEST_F(CudaSmallModel, VerifyRowsAreDecodeRowsBitForBit) {
  CudaSide decode(*model_, true), verify(*model_, true);
  const std::vector<TokenId> draft = test::random_prompt(gpu::kMaxDecodeQueries, spec_.vocab, 2);
  ASSERT_NO_FATAL_FAILURE(prefill_both(decode, verify, 0, test::random_prompt(20, spec_.vocab, 1)));  // a GEMM prefill
  const std::vector<float> verified = verify.run({{0, draft, 20, true}});
  for (size_t i = 0; i < draft.size(); ++i) {
    const std::vector<float> decoded =
        decode.run({{0, std::span(draft).subspan(i, 1), 20 + static_cast<int32_t>(i), false}});
    expect_rows_bitwise(verified, i, decoded, spec_.vocab, "draft token " + std::to_string(i));
  }
}

// A decode row's logits do not depend on a prefill chunk (cuBLAS) sharing its step: the matmuls run
// the decode rows through the GEMV and only the chunk through the GEMM.
TEST_F(CudaSmallModel, DecodeRowsDoNotDependOnAPrefillInTheSameStep) {
  CudaSide alone(*model_, false), shared(*model_, false);
  ASSERT_NO_FATAL_FAILURE(prefill_both(alone, shared, 0, test::random_prompt(12, spec_.vocab, 3)));
  const std::vector<TokenId> other = test::random_prompt(40, spec_.vocab, 4);
  const std::vector<TokenId> next = test::random_prompt(1, spec_.vocab, 5);
  const std::vector<float> mixed = shared.run({{0, next, 12, false}, {1, other, 0, false}});
  expect_rows_bitwise(mixed, 0, alone.run({{0, next, 12, false}}), spec_.vocab, "decode beside a 40-token prefill");
}

// Decode steps replayed from CUDA graphs give the uncaptured steps' logits bit for bit: a batch of
// three sequences of different lengths, one crossing a 16-token block boundary and one crossing the
// decode kernel's 512-position split boundary (a new graph), with a step of two between.
// A sequence forked after its prompt shares its blocks, the last one partly filled; the first write of
// each side into that block copies it (copy-on-write), and the device mirror must replay the copy.
// Both then decode, two steps, the bits of the same two sequences prefilled apart.
TEST_F(CudaSmallModel, AForkedSequenceDecodesAsOnePrefilledApart) {
  CudaSide forked(*model_, true), apart(*model_, true);
  const std::vector<TokenId> prompt = test::random_prompt(20, spec_.vocab, 3);  // 16 + 4: a shared partial block
  ASSERT_NO_FATAL_FAILURE(prefill_both(forked, apart, 0, prompt));
  ASSERT_TRUE(forked.kv->fork(0, 1));
  apart.run({{1, prompt, 0, false}});
  const int32_t vocab = spec_.vocab;
  for (int32_t step = 0; step < 2; ++step) {
    const std::vector<TokenId> a = {static_cast<TokenId>(5 + step)}, b = {static_cast<TokenId>(9 + step)};
    const std::vector<BatchSeq> batch = {{0, a, 20 + step, false}, {1, b, 20 + step, false}};
    const std::vector<float> got = forked.run(batch), want = apart.run(batch);
    for (size_t row = 0; row < 2; ++row) {
      expect_rows_bitwise(got, row, std::vector<float>(want.begin() + static_cast<int64_t>(row) * vocab,
                                                        want.begin() + static_cast<int64_t>(row + 1) * vocab),
                          vocab, "step " + std::to_string(step) + ", sequence " + std::to_string(row));
    }
  }
}

TEST_F(CudaSmallModel, DecodeGraphsGiveTheUncapturedLogitsBitForBit) {
  CudaSide with(*model_, true), without(*model_, false);
  // prompts of 14, 5 and 509 tokens, each prefilled on its own
  const std::vector<int32_t> prompt_lengths = {14, 5, 509};
  for (size_t s = 0; s < prompt_lengths.size(); ++s) {
    const std::vector<TokenId> prompt = test::random_prompt(prompt_lengths[s], spec_.vocab, static_cast<uint32_t>(10 + s));
    ASSERT_NO_FATAL_FAILURE(prefill_both(with, without, static_cast<SeqId>(s), prompt));
  }
  std::vector<int32_t> length = prompt_lengths;
  std::vector<std::vector<TokenId>> step_tokens(prompt_lengths.size());
  for (int step = 0; step < 8; ++step) {
    // step 4 leaves sequence 1 out (a batch of two); every other step has all three
    std::vector<BatchSeq> batch;
    for (size_t s = 0; s < prompt_lengths.size(); ++s) {
      if (step == 4 && s == 1) continue;
      step_tokens[s] = test::random_prompt(1, spec_.vocab, static_cast<uint32_t>(100 + 3 * step + static_cast<int>(s)));
      batch.push_back(BatchSeq{static_cast<SeqId>(s), step_tokens[s], length[s]});
      ++length[s];
    }
    const std::vector<float> graphs = with.run(batch), no_graphs = without.run(batch);
    ASSERT_EQ(graphs.size(), batch.size() * static_cast<size_t>(spec_.vocab));
    ASSERT_NO_FATAL_FAILURE(expect_rows_bitwise(graphs, 0, no_graphs, spec_.vocab, "step " + std::to_string(step)));
  }
  EXPECT_GT(length[0], 16) << "sequence 0 crossed a block boundary";
  EXPECT_GT(length[2], 512) << "sequence 2 crossed a split boundary";
  // a shape's second step is captured, its later ones replay: three at one split (run, capture,
  // replay), then four at two splits around the batch of two (run, capture, replay, replay); a
  // buffer that grows in between starts a shape over, so at least two of each
  EXPECT_GE(with.forward.graph_captures(), 2u);
  EXPECT_GE(with.forward.graph_replays(), 2u);
  EXPECT_EQ(without.forward.graph_captures(), 0u);
}

}  // namespace
}  // namespace inferscope
