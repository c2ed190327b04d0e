// The optimized Llama forward pass (the engine -> LlamaForward -> CPU kernels) against the plain
// double-precision reference, on synthetic models of many shapes, every writable weight type and
// every KV cache type; and windowed models run past their sliding window.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "tests/support/engine_runs.h"
#include "tests/support/logit_compare.h"
#include "core/model/llama_model.h"
#include "tests/support/reference_llama.h"
#include "tests/support/synthetic_model.h"

namespace inferscope::test {
namespace {

constexpr int kPromptTokens = 10;
constexpr int kDecodeSteps = 4;

// Shapes whose matrix widths are whole blocks of 32, so every weight type can store them.
// Every shape has a rope base other than llama.cpp's default 10000, so a loader that ignores
// rope.freq_base is caught.
SyntheticModelSpec gqa3_shape() {  // 6 query heads share 2 kv heads; rope over the whole head
  SyntheticModelSpec s;
  s.dim = 96, s.n_heads = 6, s.n_kv_heads = 2, s.ffn_dim = 160, s.vocab = 40, s.rope_base = 1e6f, s.seed = 11;
  return s;
}
SyntheticModelSpec gqa2_partial_rope_shape() {  // rope on 8 of 16 dims, small base, linear scaling, tied
  SyntheticModelSpec s;
  s.dim = 64, s.n_heads = 4, s.n_kv_heads = 2, s.ffn_dim = 96, s.vocab = 45, s.rope_dim = 8;
  s.rope_base = 500.0f, s.rope_linear_factor = 2.0f, s.tied_output = true, s.seed = 12;
  return s;
}
SyntheticModelSpec mha_three_layer_shape() {  // plain multi-head attention, 3 layers
  SyntheticModelSpec s;
  s.dim = 64, s.n_layers = 3, s.n_heads = 4, s.n_kv_heads = 4, s.ffn_dim = 128, s.vocab = 35, s.rope_base = 1e5f;
  s.seed = 13;
  return s;
}
// The other architectures' parts (core/model/architecture.h), each on a block shape.
SyntheticModelSpec llama3_rope_factors_shape() {  // Llama 3.1+: rope_freqs.weight divides each pair's frequency
  SyntheticModelSpec s = gqa3_shape();
  s.rope_freq_factors = true, s.rope_base = 5e5f, s.seed = 17;
  return s;
}
// YaRN stretching a 4096-position training 4x: with head size 16 and base 50000, RoPE pairs 0..1 keep
// their frequency, 2..5 blend, 6..7 are interpolated; cos and sin scaled by 1 + 0.1 ln 4.
SyntheticModelSpec yarn_shape() {
  SyntheticModelSpec s;
  s.dim = 64, s.n_heads = 4, s.n_kv_heads = 2, s.ffn_dim = 96, s.vocab = 42, s.context_length = 16384;
  s.rope_base = 5e4f;
  s.rope_yarn_factor = 4.0f, s.rope_yarn_orig_ctx = 4096, s.seed = 23;
  return s;
}
SyntheticModelSpec qwen2_shape() {  // NEOX pairs, Q/K/V biases, partial rope
  SyntheticModelSpec s;
  s.architecture = "qwen2";
  s.dim = 64, s.n_heads = 4, s.n_kv_heads = 2, s.ffn_dim = 96, s.vocab = 43, s.rope_dim = 12, s.rope_base = 1e6f;
  s.seed = 18;
  return s;
}
SyntheticModelSpec qwen3_shape() {  // NEOX pairs, per-head Q/K norms, heads of 32 over a 64-wide model
  SyntheticModelSpec s;
  s.architecture = "qwen3";
  s.dim = 64, s.n_heads = 4, s.n_kv_heads = 2, s.key_length = 32, s.ffn_dim = 96, s.vocab = 39, s.rope_base = 1e6f;
  s.tied_output = true, s.seed = 19;
  return s;
}

SyntheticModelSpec phi3_shape() {  // NEOX pairs, Q/K/V in one tensor, gate and up in one
  SyntheticModelSpec s;
  s.architecture = "phi3";
  s.dim = 96, s.n_heads = 3, s.n_kv_heads = 3, s.ffn_dim = 128, s.vocab = 37, s.rope_base = 2e5f, s.seed = 20;
  return s;
}

SyntheticModelSpec gemma3_shape() {  // the Gemma 3 parts, two local layers per global one, a soft cap
  SyntheticModelSpec s;
  s.architecture = "gemma3";
  s.dim = 64, s.n_layers = 4, s.n_heads = 4, s.n_kv_heads = 2, s.key_length = 32, s.ffn_dim = 96, s.vocab = 41;
  s.rope_base = 1e6f, s.sliding_window = 48, s.swa_pattern = 3, s.logit_softcap = 30.0f, s.tied_output = true;
  s.seed = 21;
  return s;
}

// Odd sizes only plain float weights can hold.
SyntheticModelSpec mqa_odd_shape() {  // 5 heads of 12 share one kv head; ffn 100; rope on 6 of 12
  SyntheticModelSpec s;
  s.dim = 60, s.n_heads = 5, s.n_kv_heads = 1, s.ffn_dim = 100, s.vocab = 37, s.rope_dim = 6, s.rope_base = 100.0f;
  s.seed = 14;
  return s;
}
// head_dim 32: the smallest a q8 KV cache takes (its Q8_0 blocks of 32 may not straddle heads).
SyntheticModelSpec q8_kv_shape() {  // 4 query heads over 2 kv heads of 32, 2 layers
  SyntheticModelSpec s;
  s.dim = 128, s.n_heads = 4, s.n_kv_heads = 2, s.ffn_dim = 160, s.vocab = 41, s.rope_base = 2e5f, s.seed = 16;
  return s;
}
SyntheticModelSpec odd_head_dim_shape() {  // head_dim 7 (rope on 6 of 7), 6 heads over 3 kv heads, tied
  SyntheticModelSpec s;
  s.dim = 42, s.n_heads = 6, s.n_kv_heads = 3, s.ffn_dim = 50, s.vocab = 29, s.rope_dim = 6;
  s.rope_base = 5e5f, s.tied_output = true, s.seed = 15;
  return s;
}

struct Case {
  std::string name;
  SyntheticModelSpec spec;
  DType kv_dtype;
  // Bound on max|optimized - reference| / max|reference| over one position's logits.
  double bound;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// Bounds per configuration, each derived, with what was observed on the shapes below (each bound is
// at least twice below the error a wrong RoPE pairing, an ignored rope base or a wrong GQA head
// mapping produces, which BoundCatchesRopeAndGqaBugs checks):
// - f32 cache, any weight type: matmul's default f32 activations multiply the exactly dequantized
//   weights, so the kernels compute in f32 on the same values the reference reads; only f32
//   rounding remains: about 2^-24 per operation over the ~1600 roundings on a logit's path here
//   (matmuls, norms, attention, 3 layers), ~1e-4 (observed <= 1.3e-6).
// - f16 and q8 caches: the reference stores its K and V the same way (ReferenceOptions::kv_type),
//   so only f32 rounding remains, except where the engine's f32 value and the reference's fall on
//   either side of a rounding boundary: there the two store neighbouring values, one step of the
//   format apart. The bound allows that one step, relative: 2^-10 for f16 (11 significant bits;
//   observed <= 7.4e-5), 1/127 of a block's largest |value| for Q8_0 (observed <= 4.8e-7: no value
//   crossed a boundary).
constexpr double kFloatBound = 1e-4;
constexpr double kF16CacheBound = 0x1p-10;
constexpr double kQ8CacheBound = 1.0 / 127;

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  const std::vector<std::pair<std::string, SyntheticModelSpec>> block_shapes = {
      {"gqa3", gqa3_shape()}, {"gqa2_partial_rope_tied", gqa2_partial_rope_shape()}, {"mha_3layers", mha_three_layer_shape()},
      {"q8_kv", q8_kv_shape()},
      {"llama3_rope_factors", llama3_rope_factors_shape()}, {"qwen2", qwen2_shape()}, {"qwen3", qwen3_shape()},
      {"phi3", phi3_shape()}, {"gemma3", gemma3_shape()}, {"yarn", yarn_shape()}};
  const std::vector<std::pair<std::string, SyntheticModelSpec>> odd_shapes = {{"mqa_odd", mqa_odd_shape()},
                                                                             {"odd_head_dim", odd_head_dim_shape()}};
  for (DType w : {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1}) {
    const bool is_float = w == DType::F32 || w == DType::F16;
    auto shapes = block_shapes;
    if (is_float) shapes.insert(shapes.end(), odd_shapes.begin(), odd_shapes.end());
    for (auto [shape_name, spec] : shapes) {
      spec.weight_dtype = w;
      const std::string base = shape_name + "_" + std::string(dtype_name(w));
      cases.push_back({base + "_kvf32", spec, DType::F32, kFloatBound});
      if (w != DType::F32) continue;
      cases.push_back({base + "_kvf16", spec, DType::F16, kF16CacheBound});
      if (spec.head_dim() % 32 == 0) cases.push_back({base + "_kvq8", spec, DType::Q8_0, kQ8CacheBound});
    }
  }
  return cases;
}

// Logits of the optimized pass through the engine at every position, the tokens fed in steps of
// kPromptTokens (one prefill, then chunks deeper into the context).
std::vector<std::vector<float>> optimized_logits(const LlamaModel& model, DType kv_dtype,
                                                 const std::vector<TokenId>& tokens,
                                                 const std::string& attention = "flash") {
  EngineConfig config;
  config.threads = 2;
  config.kv_dtype = kv_dtype;
  config.attention = attention;
  config.scheduler.max_batch_tokens = kPromptTokens;
  const std::vector<float> all = engine_logits(model, config, tokens);
  const auto vocab = static_cast<size_t>(model.config().vocab_size);
  std::vector<std::vector<float>> out;
  for (size_t p = 0; p < tokens.size(); ++p) out.emplace_back(all.begin() + p * vocab, all.begin() + (p + 1) * vocab);
  return out;
}

// The worst relative error over all positions between `got` and a reference run over `tokens`.
double worst_error(const std::vector<std::vector<float>>& got, ReferenceLlama ref, const std::vector<TokenId>& tokens) {
  double worst = 0.0;
  for (size_t p = 0; p < tokens.size(); ++p) worst = std::max(worst, relative_error(got[p], ref.step(tokens[p])));
  return worst;
}

class ForwardReferenceTest : public ::testing::TestWithParam<Case> {};

TEST_P(ForwardReferenceTest, MatchesReferenceAtEveryPosition) {
  const Case& c = GetParam();
  SCOPED_TRACE(c.spec.describe());
  const auto model = load_synthetic_model(c.spec);
  const std::vector<TokenId> tokens = random_tokens(kPromptTokens + kDecodeSteps, c.spec.vocab, c.spec.seed);
  const auto got = optimized_logits(*model, c.kv_dtype, tokens);
  ASSERT_EQ(got.size(), tokens.size());

  ReferenceLlama ref(model->file(), c.spec, {.kv_type = c.kv_dtype});
  for (size_t p = 0; p < tokens.size(); ++p) {
    const double err = relative_error(got[p], ref.step(tokens[p]));
    EXPECT_LE(err, c.bound) << "position " << p << (p < kPromptTokens ? " (prompt)" : " (decode)");
  }
}

// The bound is tight enough to catch the bugs it exists for: the optimized logits are farther than
// the bound from a reference that pairs RoPE dimensions wrongly, uses another rope base, maps query
// heads to the wrong kv heads, or leaves out the architecture's own parts.
TEST_P(ForwardReferenceTest, BoundCatchesRopeAndGqaBugs) {
  const Case& c = GetParam();
  SCOPED_TRACE(c.spec.describe());
  const auto model = load_synthetic_model(c.spec);
  const std::vector<TokenId> tokens = random_tokens(kPromptTokens + kDecodeSteps, c.spec.vocab, c.spec.seed);
  const auto got = optimized_logits(*model, c.kv_dtype, tokens);
  // the reference storing K/V as the case's cache does, with `mutation`
  const auto with = [&](ReferenceMutation mutation) {
    return ReferenceOptions{.kv_type = c.kv_dtype, .mutation = mutation};
  };

  // a margin of 2x, so the catch does not hinge on this seed
  EXPECT_GT(worst_error(got, ReferenceLlama(model->file(), c.spec, with(ReferenceMutation::RopeOtherPairing)), tokens),
            2 * c.bound)
      << "the other architecture's RoPE pairs";
  if (c.spec.architecture == "qwen2" || c.spec.architecture == "qwen3" || c.spec.architecture == "gemma3" ||
      c.spec.rope_freq_factors) {
    EXPECT_GT(worst_error(got, ReferenceLlama(model->file(), c.spec, with(ReferenceMutation::NoArchitectureParts)), tokens),
              2 * c.bound)
        << "the architecture's biases, Q/K norms, post norms, embedding scale or RoPE factors left out";
  }
  if (c.spec.architecture == "gemma3") {
    EXPECT_GT(worst_error(got, ReferenceLlama(model->file(), c.spec, with(ReferenceMutation::LocalRopeIgnored)), tokens),
              2 * c.bound)
        << "local layers on the global RoPE base";
  }
  if (c.spec.architecture == "phi3") {
    EXPECT_GT(worst_error(got, ReferenceLlama(model->file(), c.spec, with(ReferenceMutation::FusedGateUpSwapped)), tokens),
              2 * c.bound)
        << "ffn_up's gate and up halves swapped";
  }
  SyntheticModelSpec default_base = c.spec;
  default_base.rope_base = 10000.0f;
  ASSERT_NE(c.spec.rope_base, default_base.rope_base);
  EXPECT_GT(worst_error(got, ReferenceLlama(model->file(), default_base, with(ReferenceMutation::None)), tokens), 2 * c.bound)
      << "rope.freq_base ignored (default 10000)";
  // with one kv head, or one query head per kv head, every mapping agrees
  if (c.spec.n_kv_heads > 1 && c.spec.n_kv_heads < c.spec.n_heads) {
    EXPECT_GT(worst_error(got, ReferenceLlama(model->file(), c.spec, with(ReferenceMutation::GqaModulo)), tokens),
              2 * c.bound)
        << "query head h on kv head h % n_kv_heads";
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ForwardReferenceTest, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& param) { return param.param.name; });

// The loader reads the synthetic shape back as written (the reference relies on the spec).
TEST(SyntheticModel, ConfigMatchesSpec) {
  const SyntheticModelSpec spec = gqa2_partial_rope_shape();
  const auto model = load_synthetic_model(spec);
  const LlamaConfig& c = model->config();
  EXPECT_EQ(c.dim, spec.dim);
  EXPECT_EQ(c.n_layers, spec.n_layers);
  EXPECT_EQ(c.n_heads, spec.n_heads);
  EXPECT_EQ(c.n_kv_heads, spec.n_kv_heads);
  EXPECT_EQ(c.head_dim, spec.head_dim());
  EXPECT_EQ(c.ffn_dim, spec.ffn_dim);
  EXPECT_EQ(c.vocab_size, spec.vocab);
  EXPECT_EQ(c.rope_dim, spec.rope_dim);
  EXPECT_FLOAT_EQ(c.rope_freq_base, spec.rope_base);
  EXPECT_FLOAT_EQ(c.rope_freq_scale, 1.0f / spec.rope_linear_factor);
  EXPECT_TRUE(c.tied_output);
  EXPECT_EQ(model->tokenizer().vocab().bos, 1);
  EXPECT_TRUE(c.differences().empty());
}

// The values are drawn and quantized on every core, and the file is the same on any number of them.
TEST(SyntheticModel, TheSameFileOnAnyNumberOfThreads) {
  SyntheticModelSpec spec = gqa2_partial_rope_shape();
  spec.vocab = 4096;  // a token_embd of 4096 x 64: four chunks of draws, many runs of rows
  spec.weight_dtype = DType::Q8_0;
  // the bytes of the file the spec writes
  const auto written = [&spec] {
    const std::string path = ::testing::TempDir() + "/synthetic-threads.gguf";
    write_synthetic_model(spec, path);
    std::ifstream in(path, std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::filesystem::remove(path);
    return bytes;
  };
  std::string files[3];
  for (int threads = 1; threads <= 3; ++threads) {
    spec.writer_threads = threads;
    files[threads - 1] = written();
  }
  ASSERT_GT(files[0].size(), 4096u * 64u);
  EXPECT_TRUE(files[0] == files[1]) << "1 and 2 threads wrote different files";
  EXPECT_TRUE(files[0] == files[2]) << "1 and 3 threads wrote different files";
  // a different seed draws different values
  spec.seed += 1;
  const std::string other = written();
  EXPECT_EQ(other.size(), files[0].size());
  EXPECT_FALSE(other == files[0]);
}

// Qwen3's head size comes from attention.key_length (4 heads of 32 over a 64-wide model), and the
// model says what differs from Llama.
TEST(SyntheticModel, ArchitectureTraitsAndKeyLength) {
  const auto qwen3 = load_synthetic_model(qwen3_shape());
  EXPECT_EQ(qwen3->config().architecture, "qwen3");
  EXPECT_EQ(qwen3->config().head_dim, 32);
  EXPECT_EQ(qwen3->config().q_dim(), 128);
  EXPECT_TRUE(qwen3->config().head_dim_from_key_length);
  EXPECT_EQ(qwen3->config().traits.rope_pairing, RopePairing::Neox);
  EXPECT_EQ(qwen3->config().differences(),
            (std::vector<std::string>{"RoPE rotates NEOX pairs (i, i + rope_dim/2), not adjacent ones",
                                      "RMSNorm of every Q and K head before RoPE",
                                      "head size from attention.key_length, not embedding / heads"}));
  const auto qwen2 = load_synthetic_model(qwen2_shape());
  EXPECT_TRUE(qwen2->config().traits.qkv_bias);
  ASSERT_NE(qwen2->weights().layers[0].bq, nullptr);
  const auto phi3 = load_synthetic_model(phi3_shape());
  const LlamaLayerWeights& l = phi3->weights().layers[1];
  // the views lie one after another in the fused tensors
  EXPECT_EQ(static_cast<const uint8_t*>(l.wk.data), static_cast<const uint8_t*>(l.wq.data) + l.wq.rows * l.wq.row_stride);
  EXPECT_EQ(static_cast<const uint8_t*>(l.wv.data), static_cast<const uint8_t*>(l.wk.data) + l.wk.rows * l.wk.row_stride);
  EXPECT_EQ(static_cast<const uint8_t*>(l.w_up.data), static_cast<const uint8_t*>(l.w_gate.data) + l.w_gate.rows * l.w_gate.row_stride);
  const auto llama3 = load_synthetic_model(llama3_rope_factors_shape());
  EXPECT_TRUE(llama3->config().rope_freq_factors);
  ASSERT_NE(llama3->weights().rope_freq_factors, nullptr);
}

// A sliding window keeps the file's context and says which layers it holds for: gemma3's local
// layers (all but every swa_pattern-th), every layer of an architecture without that pattern.
TEST(SyntheticModel, SlidingWindowLayersAndWhatDiffers) {
  SyntheticModelSpec phi3 = phi3_shape();
  phi3.sliding_window = 48;
  const auto windowed = load_synthetic_model(phi3);
  EXPECT_EQ(windowed->config().context_length, phi3.context_length);
  EXPECT_EQ(windowed->config().layer_window(0), 48);
  EXPECT_EQ(windowed->config().layer_window(1), 48);
  EXPECT_EQ(windowed->config().differences().back(), "2 of 2 layers local: sliding window of 48 tokens");
  const auto gemma3 = load_synthetic_model(gemma3_shape());
  const LlamaConfig& g = gemma3->config();
  EXPECT_EQ((std::vector<int32_t>{g.layer_window(0), g.layer_window(1), g.layer_window(2), g.layer_window(3)}),
            (std::vector<int32_t>{48, 48, 0, 48}));
  EXPECT_EQ(g.windowed_layers(), 3);
  EXPECT_NE(std::find(g.differences().begin(), g.differences().end(),
                      "3 of 4 layers local: sliding window of 48 tokens, RoPE base 10000; the rest global (RoPE base 1e+06)"),
            g.differences().end());
  EXPECT_EQ(load_synthetic_model(gqa3_shape())->config().layer_window(0), 0);
}

// Windowed models whose context (128) is far longer than their window (16): gemma3 (local and global
// layers), phi3 and a Mistral-like llama (every layer windowed).
constexpr int32_t kWindow = 16;
std::vector<std::pair<std::string, SyntheticModelSpec>> windowed_shapes() {
  std::vector<std::pair<std::string, SyntheticModelSpec>> shapes = {
      {"gemma3", gemma3_shape()}, {"phi3", phi3_shape()}, {"llama", gqa3_shape()}};
  for (auto& [name, spec] : shapes) spec.sliding_window = kWindow, spec.context_length = 128;
  return shapes;
}

// A prompt four windows long, fed in chunks of kPromptTokens (chunks that straddle where the window
// starts to slide), by flash and naive attention, matches the reference at every position; a
// reference without the window is far off, so the window is what is being checked.
TEST(SlidingWindow, ChunkedPrefillMatchesReferencePastTheWindow) {
  for (const auto& [name, spec] : windowed_shapes()) {
    SCOPED_TRACE(name + ": " + spec.describe());
    const auto model = load_synthetic_model(spec);
    const std::vector<TokenId> tokens = random_tokens(4 * kWindow, spec.vocab, spec.seed);
    for (const char* attention : {"flash", "naive"}) {
      const auto got = optimized_logits(*model, DType::F32, tokens, attention);
      ReferenceLlama ref(model->file(), spec);
      for (size_t p = 0; p < tokens.size(); ++p) {
        EXPECT_LE(relative_error(got[p], ref.step(tokens[p])), kFloatBound) << attention << " position " << p;
      }
      const ReferenceLlama unwindowed(model->file(), spec, {.mutation = ReferenceMutation::WindowIgnored});
      EXPECT_GT(worst_error(got, unwindowed, tokens), 2 * kFloatBound) << attention << ": the window left out";
    }
  }
}

// Greedy generation from a prompt shorter than the window to three windows past it, one decode step
// at a time, with an f16 cache: every sampled row matches the reference fed the same tokens.
TEST(SlidingWindow, GreedyGenerationPastTheWindowMatchesReference) {
  for (const auto& [name, spec] : windowed_shapes()) {
    SCOPED_TRACE(name + ": " + spec.describe());
    const auto model = load_synthetic_model(spec);
    const std::vector<TokenId> prompt = random_tokens(kWindow / 2, spec.vocab, spec.seed);
    EngineConfig config;
    config.threads = 2;
    SyncEngine engine(*model, config);
    EngineRequest request;
    request.prompt_tokens = prompt;
    request.max_tokens = 3 * kWindow;
    request.sampling.ignore_eos = true;
    request.logits = LogitsOutput::Sampled;
    std::vector<std::vector<float>> rows;
    const RequestOutcome out = engine.run(request, {}, [&](RequestId, int32_t, std::span<const float> row) {
      rows.emplace_back(row.begin(), row.end());
    });
    ASSERT_EQ(out.tokens.size(), static_cast<size_t>(3 * kWindow));
    ASSERT_EQ(rows.size(), out.tokens.size());
    // row i was sampled at position prompt + i - 1: after the prompt, then after each generated token
    ReferenceLlama ref(model->file(), spec, {.kv_type = DType::F16});
    std::vector<double> want;
    for (TokenId t : prompt) want = ref.step(t);
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_LE(relative_error(rows[i], want), kF16CacheBound) << "generated token " << i;
      want = ref.step(out.tokens[i]);
    }
  }
}

}  // namespace
}  // namespace inferscope::test
