// Byte-level BPE: the GPT-2 byte table, the pre-tokenizer scanners, merge order, special tokens,
// round trips and speed, on small vocabularies built here.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/gguf/gguf_file.h"
#include "core/tokenizer/bpe_tokenizer.h"
#include "core/tokenizer/pre_tokenizer.h"
#include "core/tokenizer/unicode.h"

namespace inferscope {
namespace {

// Raw bytes spelled in the byte-level alphabet (" w" -> "Ġw").
std::string mapped(std::string_view raw) {
  std::string out;
  for (const char c : raw) utf8_append(out, gpt2_byte_to_code_point(static_cast<uint8_t>(c)));
  return out;
}

// A gpt2 vocabulary: the 256 byte characters, one token per merge result (merges given in raw
// text as {left, right}, ranked in order), then control tokens.
Vocab byte_level_vocab(const std::vector<std::pair<std::string, std::string>>& merges,
                       const std::vector<std::string>& controls = {}, const std::string& pre = "gpt2") {
  Vocab v;
  v.model = "gpt2";
  v.pre = pre;
  std::set<std::string> seen;
  auto add = [&](const std::string& text, TokenType type) {
    if (!seen.insert(text).second) return;
    v.tokens.push_back(text);
    v.types.push_back(type);
  };
  for (int b = 0; b < 256; ++b) add(mapped(std::string(1, static_cast<char>(b))), TokenType::NORMAL);
  for (const auto& [l, r] : merges) {
    add(mapped(l + r), TokenType::NORMAL);
    v.merges.push_back(mapped(l) + " " + mapped(r));
  }
  for (const auto& c : controls) add(c, TokenType::CONTROL);
  return v;
}

TokenId id_of(const Tokenizer& t, const std::string& raw) {
  const auto it = t.vocab().token_to_id.find(mapped(raw));
  return it == t.vocab().token_to_id.end() ? -1 : it->second;
}

std::vector<TokenId> ids_of(const Tokenizer& t, const std::vector<std::string>& raws) {
  std::vector<TokenId> ids;
  for (const auto& r : raws) ids.push_back(id_of(t, r));
  return ids;
}

std::vector<std::string> split(PreTokenizer kind, std::string_view text) {
  std::vector<std::string> out;
  for (const auto piece : pre_tokenize(kind, text)) out.emplace_back(piece);
  return out;
}

using Pieces = std::vector<std::string>;

TEST(Gpt2ByteTable, PrintableBytesStandForThemselvesOthersFollow256) {
  EXPECT_EQ(gpt2_byte_to_code_point('A'), uint32_t('A'));
  EXPECT_EQ(gpt2_byte_to_code_point(0xE9), 0xE9u);
  EXPECT_EQ(gpt2_byte_to_code_point(0x00), 256u);
  EXPECT_EQ(gpt2_byte_to_code_point(' '), 0x120u);   // Ġ
  EXPECT_EQ(gpt2_byte_to_code_point('\n'), 0x10Au);  // Ċ
  EXPECT_EQ(gpt2_byte_to_code_point(0xAD), 0x143u);  // the last non-printable byte
  std::set<uint32_t> cps;
  for (int b = 0; b < 256; ++b) {
    const uint32_t cp = gpt2_byte_to_code_point(static_cast<uint8_t>(b));
    cps.insert(cp);
    EXPECT_EQ(gpt2_code_point_to_byte(cp), b);
  }
  EXPECT_EQ(cps.size(), 256u);
  EXPECT_EQ(gpt2_code_point_to_byte(0x2581), -1);
}

TEST(PreTokenizer, NamesFromGguf) {
  EXPECT_EQ(pre_tokenizer_from_name("default"), PreTokenizer::Gpt2);
  EXPECT_EQ(pre_tokenizer_from_name("gpt2"), PreTokenizer::Gpt2);
  EXPECT_EQ(pre_tokenizer_from_name("smollm"), PreTokenizer::SmolLM);
  EXPECT_EQ(pre_tokenizer_from_name("llama3"), PreTokenizer::Llama3);
  EXPECT_EQ(pre_tokenizer_from_name("llama-bpe"), PreTokenizer::Llama3);
  EXPECT_EQ(pre_tokenizer_from_name("qwen2"), PreTokenizer::Qwen2);
  EXPECT_EQ(pre_tokenizer_from_name("no-such-pre"), std::nullopt);
}

TEST(PreTokenizer, Gpt2) {
  EXPECT_EQ(split(PreTokenizer::Gpt2, "Hello world's  \n\n test 123abc!!"),
            (Pieces{"Hello", " world", "'s", "  \n\n", " test", " 123", "abc", "!!"}));
  EXPECT_EQ(split(PreTokenizer::Gpt2, "I'M"), (Pieces{"I", "'", "M"}));  // contractions are case-sensitive
  EXPECT_EQ(split(PreTokenizer::Gpt2, "\tabc  "), (Pieces{"\t", "abc", "  "}));
  EXPECT_EQ(split(PreTokenizer::Gpt2, "café 中文 테스트"), (Pieces{"café", " 中文", " 테스트"}));
}

TEST(PreTokenizer, SmolLMSplitsEveryDigitFirst) {
  EXPECT_EQ(split(PreTokenizer::SmolLM, "abc12345 x"), (Pieces{"abc", "1", "2", "3", "4", "5", " x"}));
  EXPECT_EQ(split(PreTokenizer::SmolLM, "a 1"), (Pieces{"a", " ", "1"}));  // " 1" is cut by the digit split
  EXPECT_EQ(split(PreTokenizer::SmolLM, "x ٣"), (Pieces{"x", " ", "٣"}));  // any \p{N}, not just ASCII
}

TEST(PreTokenizer, Llama3) {
  EXPECT_EQ(split(PreTokenizer::Llama3, "abc12345 x"), (Pieces{"abc", "123", "45", " x"}));
  EXPECT_EQ(split(PreTokenizer::Llama3, "Hello\n\n  world"), (Pieces{"Hello", "\n\n", " ", " world"}));
  EXPECT_EQ(split(PreTokenizer::Llama3, "I'M"), (Pieces{"I", "'M"}));  // case-insensitive contractions
  EXPECT_EQ(split(PreTokenizer::Llama3, "\tabc"), (Pieces{"\tabc"}));
  EXPECT_EQ(split(PreTokenizer::Llama3, "x ...\n\ny"), (Pieces{"x", " ...\n\n", "y"}));
}

TEST(PreTokenizer, Qwen2SplitsSingleDigits) {
  EXPECT_EQ(split(PreTokenizer::Qwen2, "x 2024"), (Pieces{"x", " ", "2", "0", "2", "4"}));
}

TEST(PreTokenizer, PiecesCoverTheTextExactlyEvenWhenInvalid) {
  const std::string text = "\xFF\xFE" "ab \xC3 12\r\n\n  \xF0\x9F\x98\x80!x";
  for (const auto kind : {PreTokenizer::Gpt2, PreTokenizer::SmolLM, PreTokenizer::Llama3, PreTokenizer::Qwen2}) {
    std::string joined;
    for (const auto& p : split(kind, text)) {
      EXPECT_FALSE(p.empty());
      joined += p;
    }
    EXPECT_EQ(joined, text);
  }
}

TEST(BpeTokenizer, MergesBuildWholeWords) {
  const auto tok = Tokenizer::from_vocab(byte_level_vocab({{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}}));
  EXPECT_EQ(tok->encode("hello", false), ids_of(*tok, {"hello"}));
  EXPECT_EQ(tok->encode("help", false), ids_of(*tok, {"he", "l", "p"}));
}

TEST(BpeTokenizer, LowerRankMergesFirst) {
  const auto bc_first = Tokenizer::from_vocab(byte_level_vocab({{"b", "c"}, {"a", "b"}}));
  EXPECT_EQ(bc_first->encode("abc", false), ids_of(*bc_first, {"a", "bc"}));
  const auto ab_first = Tokenizer::from_vocab(byte_level_vocab({{"a", "b"}, {"b", "c"}}));
  EXPECT_EQ(ab_first->encode("abc", false), ids_of(*ab_first, {"ab", "c"}));
  // Equal ranks: the leftmost pair merges first.
  const auto aa = Tokenizer::from_vocab(byte_level_vocab({{"a", "a"}}));
  EXPECT_EQ(aa->encode("aaa", false), ids_of(*aa, {"aa", "a"}));
}

TEST(BpeTokenizer, Llama3TakesAWholePieceThatIsAToken) {
  Vocab v = byte_level_vocab({{"h", "i"}});
  v.tokens.push_back(mapped("hello"));  // a token no merge path reaches
  v.types.push_back(TokenType::NORMAL);
  Vocab v3 = v;
  v3.pre = "llama3";
  const auto gpt2 = Tokenizer::from_vocab(std::move(v));
  const auto llama3 = Tokenizer::from_vocab(std::move(v3));
  EXPECT_EQ(llama3->encode("hello", false), ids_of(*llama3, {"hello"}));
  EXPECT_EQ(gpt2->encode("hello", false), ids_of(*gpt2, {"h", "e", "l", "l", "o"}));
}

TEST(BpeTokenizer, EveryByteRoundTrips) {
  const auto tok = Tokenizer::from_vocab(byte_level_vocab({{" ", "w"}, {"o", "r"}}));
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes += static_cast<char>(b);
  for (const std::string& s : {all_bytes, std::string("world \xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80 \xFF\xC3"),
                              std::string("  \n\t  "), std::string()}) {
    EXPECT_EQ(tok->decode(tok->encode(s, false)), s);
  }
  EXPECT_EQ(tok->token_to_piece(id_of(*tok, " w")), " w");
}

TEST(BpeTokenizer, UserDefinedPiecesAreTheirText) {
  Vocab v = byte_level_vocab({}, {"<|end|>"});
  v.tokens.push_back("<tool>");
  v.types.push_back(TokenType::USER_DEFINED);
  const auto tok = Tokenizer::from_vocab(std::move(v));
  const TokenId tool = tok->vocab().size() - 1, end = tool - 1;
  EXPECT_EQ(tok->token_to_piece(tool), "<tool>");
  EXPECT_EQ(tok->token_to_piece(end), "");
  EXPECT_EQ(tok->token_to_piece(end, true), "<|end|>");
  EXPECT_EQ(tok->decode(tok->encode("a<tool>b", false)), "a<tool>b");
}

TEST(BpeTokenizer, SpecialTokensLongestSpellingFirst) {
  const auto tok = Tokenizer::from_vocab(byte_level_vocab({}, {"<x>", "<x><y>"}));
  const TokenId x = tok->vocab().token_to_id.at("<x>");
  const TokenId xy = tok->vocab().token_to_id.at("<x><y>");
  EXPECT_EQ(tok->encode("<x><y><x>", false), (std::vector<TokenId>{xy, x}));
  std::vector<TokenId> expected{x};
  for (const auto id : ids_of(*tok, {"a", "b"})) expected.push_back(id);
  expected.push_back(x);
  EXPECT_EQ(tok->encode("<x>ab<x>", false), expected);
  // Without parse_special the spelling is ordinary text.
  EXPECT_EQ(tok->encode("<x>", false, false), ids_of(*tok, {"<", "x", ">"}));
  EXPECT_EQ(tok->decode(tok->encode("<x>ab", false)), "ab");
  EXPECT_EQ(tok->decode(tok->encode("<x>ab", false), true), "<x>ab");
}

TEST(BpeTokenizer, UnknownPreTokenizerIsAnError) {
  EXPECT_THROW(Tokenizer::from_vocab(byte_level_vocab({}, {}, "no-such-pre")), GgufError);
}

TEST(BpeTokenizer, TenKilobyteWordsMergeCompletely) {
  // Merges that build long runs of 'a' make one 10 KB word merge about 10^4 times.
  std::vector<std::pair<std::string, std::string>> merges = {{"t", "h"}, {"th", "e"}, {" ", "the"}};
  for (std::string run = "a"; run.size() < 4096; run += run) merges.push_back({run, run});
  const auto tok = Tokenizer::from_vocab(byte_level_vocab(merges));
  std::string prose;
  while (prose.size() < 10240) prose += "the quick brown fox jumps over the lazy dog 1234, then the rest. ";
  const std::string word(10240, 'a');
  for (const std::string& text : {prose, word}) {
    EXPECT_EQ(tok->decode(tok->encode(text, false)), text) << text.substr(0, 20);
  }
  EXPECT_EQ(tok->encode(word, false).size(), 10240u / 4096 + 1);  // 4096 + 4096 + 2048
}

}  // namespace
}  // namespace inferscope
