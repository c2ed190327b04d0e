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

#include "core/workload/text_perplexity.h"
#include "core/model/llama_model.h"
#include "core/quant/quality.h"
#include "tests/llamacpp/llama_cpp_tools.h"
#include "tests/llamacpp/not_built.h"
#include "tests/support/test_models.h"

namespace inferscope::test {
namespace {

// Our perplexity against llama-perplexity's, text by text and context by context. 1% is below the
// noise floor of 8-bit activations on 512 tokens: each engine's own f32 summation order rounds some
// activations to the neighbouring 8-bit step. llama.cpp's figure alone moves by up to 2.17% (RMS 0.88%
// over these 20 rows) between its f16 cache with flash attention and an f32 cache without it, a change
// that is exact in the maths; ours is within 1.23% of its default (RMS 0.57%). So the test fails past
// 1.5%, marks every row past 1%, and prints llama.cpp's own spread beside each (docs/RELIABILITY.md).
// A tokenizer or forward-pass bug is far larger: Gemma's runs of spaces were 3x and 80,000x off.
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
  config.forward.matmul.activations = ActivationPrecision::Q8;
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
  std::printf("%-8s %-24s %5s %10s %10s %8s %15s %8s\n", "model", "text", "ctx", "ours", "llama.cpp", "diff",
              "its f32 cache", "spread");
  for (const int ctx : kContexts) {
    const int chunks = std::min(kTokensPerText, static_cast<int>(tokens.size())) / ctx;
    const std::span<const TokenId> scored(tokens.data(), static_cast<size_t>(chunks * ctx));
    const double ours =
        measure_text_perplexity(*model, like_for_like(), scored, ctx, std::nullopt, {}, PerplexityMethod::LlamaCpp)
            .level.perplexity;
    const std::string file = source_path(text_path(text));
    const double theirs = llama_cpp_perplexity(LLAMA_PERPLEXITY, path, file, ctx, chunks, 2);
    const double theirs_f32_kv = llama_cpp_perplexity(LLAMA_PERPLEXITY, path, file, ctx, chunks, 2, true);
    const double diff = ours / theirs - 1;
    std::printf("%-8s %-24s %5d %10.4f %10.4f %+7.2f%% %15.4f %+7.2f%%%s\n", GetParam().model.c_str(), text.c_str(), ctx,
                ours, theirs, 100 * diff, theirs_f32_kv, 100 * (theirs_f32_kv / theirs - 1),
                std::abs(diff) > kPerplexityGoal ? "  past the 1% goal" : "");
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
