// Top-5 logprobs at every position of one text, ours against llama.cpp's (libllama through
// tests/llamacpp/llama_logits.cpp), on both real models: the first 256 tokens of the Apache licence
// (tests/fixtures/texts), whose runs of spaces and newlines once put every Gemma row but the last
// far off. Like for like in the forward pass: llama.cpp runs an f32 copy of the file (write_f32_copy:
// the weights our exact f32-activation path multiplies), both with f32 K/V, all positions in one
// prefill. Each of llama.cpp's five most likely next tokens must have our logprob within the model's
// bound, and our most likely token must be its (unless its first two are closer than that).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <ostream>
#include <vector>

#include "core/model/llama_model.h"
#include "tests/llamacpp/llama_cpp_tools.h"
#include "tests/llamacpp/not_built.h"
#include "tests/support/engine_runs.h"
#include "tests/support/test_models.h"

namespace inferscope::test {
namespace {

constexpr size_t kTokens = 256;
constexpr int kTop = 5;

// One real model and how far its logprobs may be from llama.cpp's. Only rounding differs: f32 sums
// in another order (the demo model: 0.00005 nats at most, observed), and for Gemma also ggml's GELU,
// read from a table indexed by the f16 value of its input (0.0185 nats at most, observed).
struct Case {
  const char* name;
  std::string path;
  double bound;  // nats
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// ln softmax(row)[i] for every i, in double.
std::vector<double> log_softmax(std::span<const float> row) {
  const double top = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (float v : row) sum += std::exp(static_cast<double>(v) - top);
  const double log_sum = top + std::log(sum);
  std::vector<double> out(row.size());
  for (size_t i = 0; i < row.size(); ++i) out[i] = static_cast<double>(row[i]) - log_sum;
  return out;
}

class LlamaCppTop5 : public ::testing::TestWithParam<Case> {};

TEST_P(LlamaCppTop5, LogprobsAtEveryPositionOfTheLicence) {
  ASSERT_STRNE(LLAMA_LOGITS, "") << kLlamaCppNotBuilt;
  const auto& [name, path, bound] = GetParam();
  INFERSCOPE_REQUIRE_FILE(file, path);
  const auto model = LlamaModel::load(file);
  std::vector<TokenId> tokens =
      model->tokenizer().encode(source_text("tests/fixtures/texts/apache-2.0-licence.txt"), true, false);
  ASSERT_GE(tokens.size(), kTokens);
  tokens.resize(kTokens);
  const std::string f32_path = ::testing::TempDir() + "/top5-" + name + "-f32.gguf";
  write_f32_copy(LLAMA_QUANTIZE, file, f32_path);
  const std::vector<std::vector<TopLogprob>> theirs = llama_cpp_top_logprobs(LLAMA_LOGITS, f32_path, tokens, kTop);
  std::filesystem::remove(f32_path);
  EngineConfig config;
  config.kv_dtype = DType::F32;
  const std::vector<float> ours = engine_logits(*model, config, tokens);
  ASSERT_EQ(theirs.size(), tokens.size());

  const auto vocab = static_cast<size_t>(model->config().vocab_size);
  double worst = 0;
  size_t worst_position = 0;
  for (size_t p = 0; p < tokens.size(); ++p) {
    const std::span<const float> row(ours.data() + p * vocab, vocab);
    const std::vector<double> mine = log_softmax(row);
    const std::vector<TopLogprob>& top = theirs[p];
    ASSERT_EQ(top.size(), static_cast<size_t>(kTop)) << "position " << p;
    for (const TopLogprob& t : top) {
      const double diff = std::abs(mine[static_cast<size_t>(t.id)] - t.logprob);
      if (diff > worst) worst = diff, worst_position = p;
      EXPECT_LE(diff, bound) << "position " << p << ", token " << t.id << " ("
                                     << model->tokenizer().token_to_piece(t.id) << ")";
    }
    if (top[0].logprob - top[1].logprob > bound) {
      EXPECT_EQ(std::max_element(row.begin(), row.end()) - row.begin(), top[0].id) << "most likely next token at position " << p;
    }
  }
  std::printf("%s: largest top-5 logprob difference %.5f nats (position %zu of %zu)\n", name, worst, worst_position,
              tokens.size());
}

INSTANTIATE_TEST_SUITE_P(RealModels, LlamaCppTop5,
                         ::testing::Values(Case{"demo", demo_model_path(), 0.001}, Case{"gemma3", gemma3_model_path(), 0.05}),
                         [](const auto& instance) { return std::string(instance.param.name); });

}  // namespace
}  // namespace inferscope::test
