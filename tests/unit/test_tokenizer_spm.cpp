// SentencePiece-style tokenizer: score order, space prefix, byte fallback on a vocabulary built
// here, and the stories260K vocabulary against ids from llama.cpp's llama-tokenize.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/gguf/gguf_file.h"
#include "core/gguf/gguf_writer.h"
#include "core/tokenizer/tokenizer.h"
#include "tests/support/test_models.h"
#include "tests/support/tokenizer_fixture.h"

namespace inferscope {
namespace {

const std::string kSpace = "\xE2\x96\x81";  // U+2581

// <unk> <s> </s>, the 256 byte tokens, then the given normal tokens with their scores.
Vocab spm_vocab(const std::vector<std::pair<std::string, float>>& pieces, bool byte_fallback = true) {
  Vocab v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {TokenType::UNKNOWN, TokenType::CONTROL, TokenType::CONTROL};
  v.scores = {0, 0, 0};
  for (int b = 0; byte_fallback && b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    v.tokens.push_back(name);
    v.types.push_back(TokenType::BYTE);
    v.scores.push_back(0);
  }
  for (const auto& [text, score] : pieces) {
    v.tokens.push_back(text);
    v.types.push_back(TokenType::NORMAL);
    v.scores.push_back(score);
  }
  v.unk = 0;
  v.bos = 1;
  v.eos = 2;
  v.add_bos = true;
  v.add_space_prefix = true;
  return v;
}

std::vector<TokenId> ids(const Tokenizer& t, const std::vector<std::string>& texts) {
  std::vector<TokenId> out;
  for (const auto& s : texts) out.push_back(t.vocab().token_to_id.at(s));
  return out;
}

TEST(SpmTokenizer, HigherScoreMergesFirst) {
  auto v = spm_vocab({{"a", -5}, {"b", -5}, {"c", -5}, {"ab", -1}, {"bc", -2}});
  v.add_space_prefix = false;
  Vocab swapped = v;
  swapped.scores.back() = -0.5f;  // "bc", the last token, now outscores "ab"
  const auto ab_wins = Tokenizer::from_vocab(std::move(v));
  const auto bc_wins = Tokenizer::from_vocab(std::move(swapped));
  EXPECT_EQ(ab_wins->encode("abc", false), ids(*ab_wins, {"ab", "c"}));
  EXPECT_EQ(bc_wins->encode("abc", false), ids(*bc_wins, {"a", "bc"}));
}

TEST(SpmTokenizer, SpacePrefixAndBos) {
  const auto tok = Tokenizer::from_vocab(
      spm_vocab({{kSpace, -3}, {"h", -4}, {"i", -4}, {kSpace + "h", -2}, {kSpace + "hi", -1}}));
  EXPECT_EQ(tok->encode("hi", false), ids(*tok, {kSpace + "hi"}));
  std::vector<TokenId> with_bos{1};
  for (const auto id : ids(*tok, {kSpace + "hi", kSpace + "hi"})) with_bos.push_back(id);
  EXPECT_EQ(tok->encode("hi hi", true), with_bos);
  EXPECT_EQ(tok->decode(with_bos), "hi hi");  // BOS renders as nothing, the prefix space goes
  EXPECT_EQ(tok->decode(with_bos, true), "<s>hi hi");
  // After a special token the text starts a new word again.
  EXPECT_EQ(tok->encode("<s>hi", false), (std::vector<TokenId>{1, ids(*tok, {kSpace + "hi"})[0]}));
}

TEST(SpmTokenizer, ByteFallbackForMissingCharacters) {
  const auto tok = Tokenizer::from_vocab(spm_vocab({{kSpace, -3}, {"h", -4}, {kSpace + "h", -2}}));
  const TokenId c3 = 3 + 0xC3, a9 = 3 + 0xA9;
  EXPECT_EQ(tok->encode("h\xC3\xA9", false), (std::vector<TokenId>{ids(*tok, {kSpace + "h"})[0], c3, a9}));
  EXPECT_EQ(tok->token_to_piece(c3), "\xC3");
  EXPECT_EQ(tok->decode(tok->encode("h\xC3\xA9 h", false)), "h\xC3\xA9 h");
}

// A user-defined piece ("\n" in Gemma's vocabulary) is text: it decodes to its spelling, as
// llama.cpp's token_to_piece gives it; only control and unknown pieces wait for render_special.
TEST(SpmTokenizer, UserDefinedPiecesAreTheirText) {
  Vocab v = spm_vocab({{kSpace, -3}, {"h", -4}});
  v.add_space_prefix = false;  // else the text after "\n" starts a new word, with a space
  v.tokens.push_back("\n");
  v.types.push_back(TokenType::USER_DEFINED);
  v.scores.push_back(0);
  const auto tok = Tokenizer::from_vocab(std::move(v));
  const TokenId newline = tok->vocab().size() - 1;
  EXPECT_EQ(tok->token_to_piece(newline), "\n");
  EXPECT_EQ(tok->token_to_piece(newline, true), "\n");
  EXPECT_EQ(tok->token_to_piece(1), "");  // <s>, a control piece
  EXPECT_EQ(tok->token_to_piece(0), "");  // <unk>
  EXPECT_EQ(tok->decode(tok->encode("h\nh", true)), "h\nh");
}

// User-defined pieces are carved out of the text before the merges even when special tokens are not
// parsed (llama.cpp and Hugging Face do the same): Gemma's runs of spaces exist only as user-defined
// pieces, and without this a perplexity text became one token per space.
TEST(SpmTokenizer, UserDefinedPiecesSplitEvenWithoutParsingSpecials) {
  Vocab v = spm_vocab({{kSpace, -3}, {"h", -4}, {kSpace + "h", -2}});
  v.add_space_prefix = false;
  v.tokens.insert(v.tokens.end(), {"   ", "<ctl>"});
  v.types.insert(v.types.end(), {TokenType::USER_DEFINED, TokenType::CONTROL});
  v.scores.insert(v.scores.end(), {0, 0});
  const auto tok = Tokenizer::from_vocab(std::move(v));
  const TokenId run = tok->vocab().size() - 2, control = tok->vocab().size() - 1;
  const TokenId space_h = ids(*tok, {kSpace + "h"})[0];
  EXPECT_EQ(tok->encode("h    h", false, false), (std::vector<TokenId>{ids(*tok, {"h"})[0], run, space_h}));
  EXPECT_EQ(tok->encode("h    h", false, true), tok->encode("h    h", false, false));
  // A control piece's spelling is text unless specials are parsed.
  EXPECT_EQ(tok->encode("<ctl>", false, true), (std::vector<TokenId>{control}));
  EXPECT_NE(tok->encode("<ctl>", false, false), (std::vector<TokenId>{control}));
}

TEST(SpmTokenizer, UnknownWithoutByteTokens) {
  const auto tok = Tokenizer::from_vocab(spm_vocab({{kSpace, -3}, {"h", -4}}, false));
  EXPECT_EQ(tok->encode("h\xC3\xA9", false), (std::vector<TokenId>{3, 4, 0, 0}));
}

// Writes a GGUF holding only tokenizer metadata (with `extra` keys on top) and returns its path.
std::string write_vocab_file(const std::string& name, const std::vector<std::string>& tokens,
                             const std::vector<int32_t>& types,
                             const std::vector<std::pair<std::string, GgufValue>>& extra) {
  GgufWriter w;
  w.set("tokenizer.ggml.model", GgufValue::str("llama"));
  w.set("tokenizer.ggml.tokens", GgufValue::strings(tokens));
  w.set("tokenizer.ggml.scores", GgufValue::f32s(std::vector<float>(tokens.size(), 0.0f)));
  w.set("tokenizer.ggml.token_type", GgufValue::i32s(types));
  for (const auto& [key, value] : extra) w.set(key, value);
  const auto path = (std::filesystem::temp_directory_path() / ("inferscope_" + name + ".gguf")).string();
  w.write(path);
  return path;
}

TEST(VocabFromGguf, DefaultsAndEndOfTurn) {
  const std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "<|end|>", "<|im_end|>"};
  const std::vector<int32_t> types = {2, 3, 3, 1, 3};  // <|end|> is a NORMAL token here
  const auto path = write_vocab_file("vocab_defaults", tokens, types, {});
  const Vocab v = Vocab::from_gguf(*GgufFile::open(path));
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.unk, 0);
  EXPECT_TRUE(v.add_bos);
  EXPECT_TRUE(v.add_space_prefix);
  EXPECT_EQ(v.eot, 4);  // the first candidate that is a control token
  EXPECT_TRUE(v.is_eog(4));
  EXPECT_FALSE(v.is_eog(3));

  const auto no_bos = write_vocab_file("vocab_no_bos", tokens, types,
                                       {{"tokenizer.ggml.add_bos_token", GgufValue::boolean(false)},
                                        {"tokenizer.ggml.add_space_prefix", GgufValue::boolean(false)}});
  const Vocab v2 = Vocab::from_gguf(*GgufFile::open(no_bos));
  EXPECT_FALSE(v2.add_bos);
  EXPECT_FALSE(v2.add_space_prefix);
  std::filesystem::remove(path);
  std::filesystem::remove(no_bos);
}

TEST(VocabFromGguf, BadFieldsNameFileAndKey) {
  const auto short_scores = write_vocab_file("vocab_short_scores", {"<unk>", "a"}, {2, 1},
                                             {{"tokenizer.ggml.scores", GgufValue::f32s({0.0f})}});
  try {
    Vocab::from_gguf(*GgufFile::open(short_scores));
    ADD_FAILURE() << "no error for 1 score for 2 tokens";
  } catch (const GgufError& e) {
    EXPECT_NE(std::string(e.what()).find(short_scores), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.scores"), std::string::npos) << e.what();
  }
  const auto bert = write_vocab_file("vocab_bert", {"<unk>", "a"}, {2, 1},
                                     {{"tokenizer.ggml.model", GgufValue::str("bert")}});
  try {
    Tokenizer::from_gguf(*GgufFile::open(bert));
    ADD_FAILURE() << "no error for tokenizer model bert";
  } catch (const GgufError& e) {
    EXPECT_NE(std::string(e.what()).find(bert), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'bert'"), std::string::npos) << e.what();
  }
  std::filesystem::remove(short_scores);
  std::filesystem::remove(bert);
}

TEST(SpmStories260K, VocabularyFromGguf) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto file = GgufFile::open(path);
  const Vocab v = Vocab::from_gguf(*file);
  EXPECT_EQ(v.model, "llama");
  EXPECT_EQ(v.size(), 512);
  EXPECT_EQ(v.scores.size(), 512u);
  EXPECT_EQ(v.unk, 0);
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.pad, -1);  // stored as 0xFFFFFFFF
  EXPECT_TRUE(v.add_bos);  // tokenizer.ggml.add_bos_token is absent: the SentencePiece default
  EXPECT_TRUE(v.add_space_prefix);
  EXPECT_EQ(v.types[1], TokenType::CONTROL);
  EXPECT_EQ(v.types[3], TokenType::BYTE);
  EXPECT_TRUE(v.is_eog(2));
  EXPECT_FALSE(v.is_eog(1));
}

TEST(SpmStories260K, EncodesOnceUponATime) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto tok = Tokenizer::from_gguf(*GgufFile::open(path));
  EXPECT_EQ(tok->encode("Once upon a time", true), (std::vector<TokenId>{1, 403, 407, 261, 378}));
  EXPECT_EQ(tok->decode({1, 403, 407, 261, 378}), "Once upon a time");
}

TEST(SpmStories260K, RoundTripsIncludingByteFallback) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto tok = Tokenizer::from_gguf(*GgufFile::open(path));
  for (const std::string s : {"Once upon a time, there was a little girl named Lily.", "  two leading spaces",
                              "Crème brûlée für Jürgen", "日本語 🙂 ok", "tabs\tand\nnewlines\n\n", "x"}) {
    EXPECT_EQ(tok->decode(tok->encode(s, true)), s);
  }
}

TEST(SpmStories260K, MatchesLlamaTokenize) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto tok = Tokenizer::from_gguf(*GgufFile::open(path));
  const auto cases = test::read_tokenizer_cases(test::tokenizer_fixture_path("stories260K_ids.tsv"));
  ASSERT_FALSE(cases.empty());
  for (const auto& c : cases) EXPECT_EQ(tok->encode(c.text, true), c.ids) << c.text;
}

}  // namespace
}  // namespace inferscope
