// Differential tests against llama.cpp on many kinds of text, with both real models (the demo model
// and gemma-3-270m): our perplexity (llama-perplexity's procedure, --method llamacpp) against
// llama-perplexity's at two contexts on five texts of different kinds (tests/fixtures/texts; see
// kPerplexityBound). Like for like: both sides round activations to 8 bits for the quantized matmuls
// (our --activations q8), so what remains is summation order and each engine's own rounding. A
// tokenizer or forward-pass bug on one kind of text fails here the day it is written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/text_perplexity.h"
#include "core/model/llama_model.h"
#include "core/quant/quality.h"
#include "tests/llamacpp/llama_cpp_tools.h"
#include "tests/llamacpp/not_built.h"
#include "tests/support/test_models.h"

namespace inferscope::test {
namespace {

// Our perplexity against llama-perplexity's, text by text and context by context. The goal is 1%;
// our 8-bit activation blocks are not rounded exactly as ggml's (nor is ggml's f16 K/V and GELU table
// ours), and that alone leaves up to 1.23% here (the demo model's German at ctx 256; Gemma's German
// at ctx 64 1.18%). The test fails past 1.5% and marks every row past 1%. A tokenizer or
// forward-pass bug is far larger: Gemma's runs of spaces were 3x and 80,000x off.
constexpr double kPerplexityGoal = 0.01;
constexpr double kPerplexityBound = 0.015;
// Each text is scored on its first 512 tokens at every context (llama-perplexity --chunks likewise),
// so that the ten cases take about 3.5 minutes of CI's two cores. More scored tokens average the two
// engines' rounding further: on 1024 tokens every row was within 1.02%, and German at ctx 256 within
// 0.65% on all 6 of its chunks.
constexpr int kTokensPerText = 512;

constexpr int kContexts[] = {64, 256};  // each needs at least two chunks of every text's tokens
const char* const kTexts[] = {"prose-sourdough.txt", "code-interval-tree.txt", "apache-2.0-licence.txt",
                              "german-rhein.txt", "numbers-tables.txt"};  // under tests/fixtures/texts

std::string text_path(const std::string& file) { return "tests/fixtures/texts/" + file; }

EngineConfig like_for_like() {
  EngineConfig config;
  config.matmul.activations = ActivationPrecision::Q8;
  return config;
}

// One real model on one text: a test case each, so that each stays inside ctest's time limit.
struct Case {
  std::string model;
  std::string path;
  std::string text;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.model << " on " << c.text; }

class LlamaCppOnText : public ::testing::TestWithParam<Case> {};

TEST_P(LlamaCppOnText, PerplexityCloseToLlamaPerplexity) {
  ASSERT_STRNE(LLAMA_PERPLEXITY, "") << kLlamaCppNotBuilt;
  INFERSCOPE_REQUIRE_FILE(path, GetParam().path);
  const std::string& text = GetParam().text;
  const auto model = LlamaModel::load(path);
  const std::vector<TokenId> tokens = model->tokenizer().encode(source_text(text_path(text)), true, false);
  std::printf("%-8s %-24s %5s %12s %12s %8s\n", "model", "text", "ctx", "ours", "llama.cpp", "diff");
  for (const int ctx : kContexts) {
    const int chunks = std::min(kTokensPerText, static_cast<int>(tokens.size())) / ctx;
    const std::span<const TokenId> scored(tokens.data(), static_cast<size_t>(chunks * ctx));
    const double ours =
        measure_text_perplexity(*model, like_for_like(), scored, ctx, std::nullopt, {}, PerplexityMethod::LlamaCpp)
            .level.perplexity;
    const double theirs = llama_cpp_perplexity(LLAMA_PERPLEXITY, path, source_path(text_path(text)), ctx, chunks, 2);
    const double diff = ours / theirs - 1;
    std::printf("%-8s %-24s %5d %12.4f %12.4f %+7.2f%%%s\n", GetParam().model.c_str(), text.c_str(), ctx, ours, theirs,
                100 * diff, std::abs(diff) > kPerplexityGoal ? "  past the 1% goal" : "");
    EXPECT_LE(std::abs(diff), kPerplexityBound) << text << " at ctx " << ctx << ": ours " << ours << ", llama.cpp " << theirs;
  }
}

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const auto& [name, path] : {std::pair{"demo", demo_model_path()}, std::pair{"gemma3", gemma3_model_path()}}) {
    for (const char* text : kTexts) all.push_back({name, path, text});
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(RealModels, LlamaCppOnText, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           std::string name = i.param.model + "_" + i.param.text.substr(0, i.param.text.find('.'));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace inferscope::test
