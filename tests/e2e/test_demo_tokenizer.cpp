// The demo model's byte-level BPE vocabulary (SmolLM2, pre-tokenizer "smollm") against token ids
// from llama.cpp's llama-tokenize, plus round trips, streaming and speed on real merges.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/gguf/gguf_file.h"
#include "core/tokenizer/tokenizer.h"
#include "core/tokenizer/unicode.h"
#include "tests/support/test_models.h"
#include "tests/support/tokenizer_fixture.h"

namespace inferscope {
namespace {

std::unique_ptr<Tokenizer> demo_tokenizer(const std::string& path) {
  return Tokenizer::from_gguf(*GgufFile::open(path));
}

TEST(DemoTokenizer, VocabularyFlags) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const Vocab v = Vocab::from_gguf(*GgufFile::open(path));
  EXPECT_EQ(v.model, "gpt2");
  EXPECT_EQ(v.pre, "smollm");
  EXPECT_EQ(v.size(), 49152);
  EXPECT_EQ(v.merges.size(), 48900u);
  EXPECT_FALSE(v.add_bos);
  EXPECT_FALSE(v.add_space_prefix);
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.eot, 2);  // <|im_end|>
  EXPECT_TRUE(v.is_eog(2));
  EXPECT_TRUE(v.is_eog(0));  // <|endoftext|>
  EXPECT_FALSE(v.is_eog(1));  // <|im_start|>
  EXPECT_TRUE(v.is_control(1));
}

TEST(DemoTokenizer, MatchesLlamaTokenize) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const auto tok = demo_tokenizer(path);
  const auto cases = test::read_tokenizer_cases(test::tokenizer_fixture_path("smollm2_ids.tsv"));
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    EXPECT_EQ(tok->encode(c.text, true), c.ids) << c.text;
    EXPECT_EQ(tok->decode(c.ids, true), c.text);  // specials rendered: the exact input again
  }
}

TEST(DemoTokenizer, MatchesLlamaTokenizeWithoutSpecialParsing) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const auto tok = demo_tokenizer(path);
  const auto cases = test::read_tokenizer_cases(test::tokenizer_fixture_path("smollm2_ids_no_special.tsv"));
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    EXPECT_EQ(tok->encode(c.text, true, false), c.ids) << c.text;
    EXPECT_EQ(tok->decode(c.ids), c.text);
  }
}

// The demo model's tokens and merges under another pre-tokenizer, against llama-tokenize on a
// copy of the model whose tokenizer.ggml.pre says the same (see make_fixtures.sh).
void expect_matches_with_pre(const std::string& path, const std::string& pre) {
  Vocab vocab = Vocab::from_gguf(*GgufFile::open(path));
  vocab.pre = pre;
  const auto tok = Tokenizer::from_vocab(std::move(vocab));
  const auto cases = test::read_tokenizer_cases(test::tokenizer_fixture_path("smollm2_pre_" + pre + "_ids.tsv"));
  ASSERT_GE(cases.size(), 20u);
  for (const auto& c : cases) {
    EXPECT_EQ(tok->encode(c.text, true), c.ids) << pre << ": " << c.text;
    EXPECT_EQ(tok->decode(c.ids, true), c.text);
  }
}

TEST(DemoTokenizer, Llama3PreTokenizerMatchesLlamaTokenize) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  expect_matches_with_pre(path, "llama-bpe");
}

TEST(DemoTokenizer, Qwen2PreTokenizerMatchesLlamaTokenize) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  expect_matches_with_pre(path, "qwen2");
}

TEST(DemoTokenizer, DigitsAreSingleTokens) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const auto tok = demo_tokenizer(path);
  const auto ids = tok->encode("12345", true);
  ASSERT_EQ(ids.size(), 5u);
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(tok->token_to_piece(ids[i]), std::string(1, char('1' + i)));
}

TEST(DemoTokenizer, SpecialTokensRenderOnlyOnRequest) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const auto tok = demo_tokenizer(path);
  const auto ids = tok->encode("<|im_start|>user\nhi<|im_end|>", true);
  EXPECT_EQ(ids.front(), 1);
  EXPECT_EQ(ids.back(), 2);
  EXPECT_EQ(tok->decode(ids), "user\nhi");
  EXPECT_EQ(tok->token_to_piece(2, true), "<|im_end|>");
}

TEST(DemoTokenizer, StreamDecoderNeverSplitsACharacter) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const auto tok = demo_tokenizer(path);
  const std::string text = "emoji 😀👍🏽 🇫🇷 and 日本語";
  const auto ids = tok->encode(text, true);
  Utf8StreamDecoder stream;
  std::string streamed;
  bool some_piece_was_partial = false;
  for (const TokenId id : ids) {
    const std::string piece = tok->token_to_piece(id);
    const std::string out = stream.push(piece);
    some_piece_was_partial |= out != piece;
    for (size_t pos = 0; pos < out.size();) {
      const Utf8Char c = utf8_decode(out, pos);
      ASSERT_NE(c.cp, kReplacementChar) << "half a character emitted";
      pos += c.len;
    }
    streamed += out;
  }
  streamed += stream.flush();
  EXPECT_TRUE(some_piece_was_partial);  // the emoji really are split across byte tokens
  EXPECT_EQ(streamed, text);
}

TEST(DemoTokenizer, TenKilobytesRoundTrip) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const auto tok = demo_tokenizer(path);
  std::string text;
  while (text.size() < 10240) {
    text += "The café at 221B Baker Street opens at 09:30; naïve résumés aren't accepted!\n\tfor (i = 0; i < n; ++i) {} ";
  }
  EXPECT_EQ(tok->decode(tok->encode(text, true)), text);
}

}  // namespace
}  // namespace inferscope
