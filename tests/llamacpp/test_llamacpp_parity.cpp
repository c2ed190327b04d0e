// Our forward pass against llama.cpp's (tests/llamacpp/llama_logits.cpp over libllama, built by
// scripts/llama-cpp.sh) on the same synthetic GGUF file, one per architecture and its special parts:
// llama, llama with Llama 3.1 RoPE factors, qwen2 (Q/K/V biases, NEOX pairs; also with YaRN), qwen3 (per-head Q/K
// norms, a head size from key_length), phi3 (fused attn_qkv and gate/up tensors) and gemma3 (scaled
// embeddings, post norms, a GELU gate, local layers with their own RoPE base, a logit soft cap, and a
// sliding window shorter than the sequence). f32 weights and f32 K/V on both sides, all positions of
// one prefill.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/gguf/gguf_file.h"
#include "core/model/llama_model.h"
#include "kernels/cpu/quantize.h"
#include "tests/llamacpp/llama_cpp_tools.h"
#include "tests/llamacpp/not_built.h"
#include "tests/support/engine_runs.h"
#include "tests/support/logit_compare.h"
#include "tests/support/synthetic_model.h"
#include "tests/support/test_models.h"

namespace inferscope::test {
namespace {

constexpr int kTokens = 24;

// Both sides compute in f32 from the same f32 weights, in different orders (ggml's SIMD sums, ours):
// only rounding differs, about 2^-24 per operation over the ~1600 on a logit's path (as in
// test_forward_reference), ~1e-4 relative (observed <= 2.2e-6 for the SiLU architectures here).
constexpr double kBound = 1e-4;
// ggml's CPU GELU reads a table indexed by the f16 value of its input (GGML_GELU_FP16), so every
// gate of gemma3's FFN is off by up to one f16 step, 2^-10 relative, where ours is f32 (observed
// 1.0e-4; the f64 reference in test_forward_reference holds gemma3 within 1e-4 too).
constexpr double kGeluF16Bound = 0x1p-10;

// The real Gemma 3: ggml's f16 GELU table (kGeluF16Bound per gate) compounded through 18 layers of
// real activations, whose outliers are far larger than the synthetic models': observed 8.4e-4; the
// bound allows four f16 steps.
constexpr double kRealModelBound = 4 * 0x1p-10;

struct Case {
  std::string name;
  SyntheticModelSpec spec;
  double bound = kBound;
  int tokens = kTokens;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> cases() {
  SyntheticModelSpec llama;
  llama.dim = 96, llama.n_heads = 6, llama.n_kv_heads = 2, llama.ffn_dim = 160, llama.vocab = 64;
  llama.rope_base = 1e6f, llama.context_length = 64, llama.seed = 31;
  SyntheticModelSpec llama3 = llama;
  llama3.rope_freq_factors = true, llama3.rope_base = 5e5f, llama3.seed = 32;
  SyntheticModelSpec qwen2;
  qwen2.architecture = "qwen2";
  qwen2.dim = 64, qwen2.n_heads = 4, qwen2.n_kv_heads = 2, qwen2.ffn_dim = 96, qwen2.vocab = 64, qwen2.seed = 33;
  qwen2.rope_base = 1e6f;
  SyntheticModelSpec qwen3 = qwen2;
  qwen3.architecture = "qwen3";
  qwen3.key_length = 32, qwen3.tied_output = true, qwen3.seed = 34;
  SyntheticModelSpec phi3 = qwen2;
  phi3.architecture = "phi3";
  phi3.n_kv_heads = 4, phi3.seed = 35;
  SyntheticModelSpec gemma3 = qwen3;
  gemma3.architecture = "gemma3";
  gemma3.n_layers = 4, gemma3.sliding_window = 32, gemma3.swa_pattern = 3, gemma3.logit_softcap = 30.0f, gemma3.seed = 36;
  // llama.cpp masks gemma3's local layers (its standard SWA, also with swa_full's full-size cache):
  // a 16-token window over 64 tokens, so most positions see only part of their context there
  SyntheticModelSpec gemma3_window = gemma3;
  gemma3_window.sliding_window = 16, gemma3_window.context_length = 128, gemma3_window.seed = 38;
  SyntheticModelSpec gemma3_270m_shape = gemma3;  // heads of 256, one KV head, the real model's widths
  gemma3_270m_shape.dim = 640, gemma3_270m_shape.n_heads = 4, gemma3_270m_shape.n_kv_heads = 1;
  gemma3_270m_shape.key_length = 256, gemma3_270m_shape.ffn_dim = 2048, gemma3_270m_shape.n_layers = 7;
  gemma3_270m_shape.swa_pattern = 6, gemma3_270m_shape.logit_softcap = 0.0f, gemma3_270m_shape.seed = 37;
  // YaRN on NEOX pairs: a 4096-position training stretched 8x (of the 8 pairs of a 16-wide head at
  // base 10000, 0..1 keep their frequency, 2..6 blend, 7 is interpolated)
  SyntheticModelSpec yarn = qwen2;
  yarn.rope_base = 10000.0f, yarn.context_length = 32768, yarn.rope_yarn_factor = 8.0f, yarn.rope_yarn_orig_ctx = 4096;
  yarn.seed = 37;
  return {{"llama", llama}, {"llama3_rope_factors", llama3}, {"qwen2", qwen2}, {"yarn", yarn}, {"qwen3", qwen3}, {"phi3", phi3},
          {"gemma3", gemma3, kGeluF16Bound}, {"gemma3_window16", gemma3_window, kGeluF16Bound, 64},
          {"gemma3_270m_shape", gemma3_270m_shape, kGeluF16Bound}};
}

Case windowed_case() {
  const std::vector<Case> all = cases();
  return *std::find_if(all.begin(), all.end(), [](const Case& c) { return c.name == "gemma3_window16"; });
}

class LlamaCppParity : public ::testing::TestWithParam<Case> {};

// The synthetic model of `spec` written to `path` and our logits there (f32 K/V), one row per token.
std::vector<std::vector<float>> our_logits(const SyntheticModelSpec& spec, const std::string& path,
                                           const std::vector<TokenId>& tokens) {
  write_synthetic_model(spec, path);
  const auto model = LlamaModel::load(path);
  EngineConfig config;
  config.kv_dtype = DType::F32;
  const std::vector<float> all = engine_logits(*model, config, tokens);
  const auto vocab = static_cast<size_t>(spec.vocab);
  std::vector<std::vector<float>> rows;
  for (size_t p = 0; p < tokens.size(); ++p) rows.emplace_back(all.begin() + p * vocab, all.begin() + (p + 1) * vocab);
  return rows;
}

void require_llama_cpp() { ASSERT_STRNE(LLAMA_LOGITS, "") << kLlamaCppNotBuilt; }

TEST_P(LlamaCppParity, LogitsMatchAtEveryPosition) {
  ASSERT_NO_FATAL_FAILURE(require_llama_cpp());
  const Case& c = GetParam();
  SCOPED_TRACE(c.spec.describe());
  const std::string path = ::testing::TempDir() + "/parity-" + c.name + ".gguf";
  const std::vector<TokenId> tokens = random_tokens(c.tokens, c.spec.vocab, c.spec.seed);
  const std::vector<std::vector<float>> ours = our_logits(c.spec, path, tokens);
  const std::vector<std::vector<float>> theirs = llama_cpp_logits(LLAMA_LOGITS, path, tokens);
  ASSERT_EQ(theirs.size(), tokens.size());
  for (size_t p = 0; p < tokens.size(); ++p) {
    ASSERT_EQ(theirs[p].size(), ours[p].size()) << "position " << p;
    EXPECT_LE(relative_error(std::span<const float>(ours[p]), theirs[p]), c.bound) << "position " << p;
  }
}

// The windowed case passes because both sides mask the same keys: the same weights with a window
// longer than the sequence (nothing masked) are far from llama.cpp's logits past the window.
TEST(LlamaCppParityWindow, WithoutTheMaskOurLogitsWouldDiffer) {
  ASSERT_NO_FATAL_FAILURE(require_llama_cpp());
  const Case c = windowed_case();
  ASSERT_LT(c.spec.sliding_window, c.tokens);
  const std::vector<TokenId> tokens = random_tokens(c.tokens, c.spec.vocab, c.spec.seed);
  const std::string path = ::testing::TempDir() + "/parity-window.gguf";
  write_synthetic_model(c.spec, path);
  const std::vector<std::vector<float>> theirs = llama_cpp_logits(LLAMA_LOGITS, path, tokens);
  ASSERT_EQ(theirs.size(), tokens.size());
  SyntheticModelSpec unmasked = c.spec;
  unmasked.sliding_window = c.tokens;
  const std::vector<std::vector<float>> ours = our_logits(unmasked, ::testing::TempDir() + "/parity-unmasked.gguf", tokens);
  double worst = 0.0;
  for (size_t p = 0; p < tokens.size(); ++p) {
    const double error = relative_error(std::span<const float>(ours[p]), theirs[p]);
    // within the window nothing is masked on either side
    if (p < static_cast<size_t>(c.spec.sliding_window)) {
      EXPECT_LE(error, c.bound) << "position " << p;
    }
    worst = std::max(worst, error);
  }
  EXPECT_GT(worst, 10 * c.bound);
}

INSTANTIATE_TEST_SUITE_P(Architectures, LlamaCppParity, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param) { return param.param.name; });

// The real Gemma 3 (Q4_K_M, Q6_K, Q5_0 and Q8_0 tensors). First every tensor as ggml dequantizes it
// (llama-quantize to F32) against ours, bit for bit; then llama.cpp's logits on that F32 file (the
// very weights our exact f32-activation path multiplies) against ours on the quantized file, on a chat
// prompt. (llama.cpp on the quantized file itself rounds activations to 8 bits, which moves Gemma's
// logits by up to 7.6% of their largest: not a comparison of the forward pass.)
TEST(LlamaCppParityRealModel, Gemma3MatchesLlamaCpp) {
  ASSERT_NO_FATAL_FAILURE(require_llama_cpp());
  INFERSCOPE_REQUIRE_FILE(path, gemma3_model_path());
  const std::string f32_path = ::testing::TempDir() + "/gemma3-ggml-f32.gguf";
  write_f32_copy(LLAMA_QUANTIZE, path, f32_path);
  const auto model = LlamaModel::load(path);
  {
    const auto ggml = GgufFile::open(f32_path);
    std::vector<float> row;
    for (const GgufTensorInfo& t : model->file().tensors()) {
      const GgufTensorInfo& g = ggml->tensor(t.name);
      ASSERT_EQ(g.type, DType::F32) << t.name;
      const int64_t cols = t.dims[0], rows = t.n_elements() / cols;
      row.resize(static_cast<size_t>(cols));
      for (int64_t r = 0; r < rows; ++r) {
        dequantize_row(t.type, t.data + static_cast<size_t>(r) * row_bytes(t.type, cols), row.data(), cols);
        ASSERT_EQ(std::memcmp(row.data(), g.data + static_cast<size_t>(r * cols) * sizeof(float), row.size() * sizeof(float)), 0)
            << t.name << " (" << dtype_name(t.type) << ") row " << r;
      }
    }
  }
  const std::vector<TokenId> tokens = model->tokenizer().encode(
      model->chat_template().render({{"user", "What is the capital of France?"}}, true), false);
  EngineConfig config;
  config.kv_dtype = DType::F32;
  const std::vector<float> ours = engine_logits(*model, config, tokens);
  const std::vector<std::vector<float>> theirs = llama_cpp_logits(LLAMA_LOGITS, f32_path, tokens);
  std::filesystem::remove(f32_path);
  ASSERT_EQ(theirs.size(), tokens.size());
  const auto vocab = static_cast<size_t>(model->config().vocab_size);
  for (size_t p = 0; p < tokens.size(); ++p) {
    const std::span<const float> row(ours.data() + p * vocab, vocab);
    EXPECT_LE(relative_error(row, theirs[p]), kRealModelBound) << "position " << p;
    EXPECT_EQ(std::max_element(row.begin(), row.end()) - row.begin(),
              std::max_element(theirs[p].begin(), theirs[p].end()) - theirs[p].begin())
        << "greedy choice at position " << p;
  }
}

}  // namespace
}  // namespace inferscope::test
