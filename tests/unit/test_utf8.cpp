// UTF-8 decoding/encoding, the stream decoder, and spot checks of the generated Unicode tables.
#include <gtest/gtest.h>

#include <string>

#include "core/tokenizer/tokenizer.h"
#include "core/tokenizer/unicode.h"

namespace inferscope {
namespace {

TEST(Utf8, DecodesEachSequenceLength) {
  const std::string s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";  // a é € 😀
  const uint32_t expected_cp[] = {'a', 0xE9, 0x20AC, 0x1F600};
  const uint32_t expected_len[] = {1, 2, 3, 4};
  size_t pos = 0;
  for (int i = 0; i < 4; ++i) {
    const Utf8Char c = utf8_decode(s, pos);
    EXPECT_EQ(c.cp, expected_cp[i]);
    EXPECT_EQ(c.len, expected_len[i]);
    pos += c.len;
  }
  EXPECT_EQ(pos, s.size());
}

TEST(Utf8, InvalidBytesReadAsOneReplacementCharEach) {
  for (const std::string bad : {"\xFF", "\x80", "\xC0\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82"}) {
    const Utf8Char c = utf8_decode(bad, 0);
    EXPECT_EQ(c.cp, kReplacementChar) << "input of " << bad.size() << " bytes";
    EXPECT_EQ(c.len, 1u);
  }
}

TEST(Utf8, AppendRoundTrips) {
  for (const uint32_t cp : {0x24u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
    std::string s;
    utf8_append(s, cp);
    const Utf8Char c = utf8_decode(s, 0);
    EXPECT_EQ(c.cp, cp);
    EXPECT_EQ(c.len, s.size());
  }
}

TEST(Utf8StreamDecoder, HoldsBackACharacterSplitAcrossPushes) {
  Utf8StreamDecoder d;
  EXPECT_EQ(d.push("a\xE2"), "a");
  EXPECT_EQ(d.push("\x82"), "");
  EXPECT_EQ(d.push("\xAC b"), "\xE2\x82\xAC b");
  EXPECT_EQ(d.flush(), "");
}

TEST(Utf8StreamDecoder, EmojiSplitAtEveryByte) {
  const std::string emoji = "\xF0\x9F\x98\x80";
  for (size_t cut = 1; cut < emoji.size(); ++cut) {
    Utf8StreamDecoder d;
    EXPECT_EQ(d.push(emoji.substr(0, cut)), "");
    EXPECT_EQ(d.push(emoji.substr(cut)), emoji);
  }
}

TEST(Utf8StreamDecoder, InvalidBytesBecomeReplacementCharacters) {
  Utf8StreamDecoder d;
  EXPECT_EQ(d.push("x\xFFy"), "x\xEF\xBF\xBDy");  // an invalid byte is not held back
  EXPECT_EQ(d.push("\xF0\x9F"), "");
  EXPECT_EQ(d.flush(), "\xEF\xBF\xBD");  // the stream ended inside a character
  EXPECT_EQ(d.push("ok"), "ok");
}

TEST(UnicodeTable, CategoriesOfSingleCodePoints) {
  EXPECT_EQ(unicode_category('A'), UnicodeCategory::Lu);
  EXPECT_EQ(unicode_category(0xE9), UnicodeCategory::Ll);     // é
  EXPECT_EQ(unicode_category(0x01C5), UnicodeCategory::Lt);   // ǅ
  EXPECT_EQ(unicode_category(0x0301), UnicodeCategory::Mn);   // combining acute
  EXPECT_EQ(unicode_category('7'), UnicodeCategory::Nd);
  EXPECT_EQ(unicode_category(0x0663), UnicodeCategory::Nd);   // Arabic-Indic three
  EXPECT_EQ(unicode_category(0x216B), UnicodeCategory::Nl);   // Roman numeral twelve
  EXPECT_EQ(unicode_category(0xBD), UnicodeCategory::No);     // ½
  EXPECT_EQ(unicode_category('_'), UnicodeCategory::Pc);
  EXPECT_EQ(unicode_category('+'), UnicodeCategory::Sm);
  EXPECT_EQ(unicode_category(0x20AC), UnicodeCategory::Sc);   // €
  EXPECT_EQ(unicode_category(0x1F600), UnicodeCategory::So);  // 😀
  EXPECT_EQ(unicode_category(0x3000), UnicodeCategory::Zs);
  EXPECT_EQ(unicode_category(0x2028), UnicodeCategory::Zl);
  EXPECT_EQ(unicode_category('\n'), UnicodeCategory::Cc);
  EXPECT_EQ(unicode_category(0x200D), UnicodeCategory::Cf);   // zero width joiner
  EXPECT_EQ(unicode_category(0x0378), UnicodeCategory::Cn);   // unassigned
  EXPECT_EQ(unicode_category(0x110000), UnicodeCategory::Cn); // past the last code point
}

TEST(UnicodeTable, FirstLastRangesCoverTheirInterior) {
  // UnicodeData.txt gives these blocks as a <..., First> and a <..., Last> line only.
  EXPECT_EQ(unicode_category(0x4E00), UnicodeCategory::Lo);   // CJK Ideograph, First
  EXPECT_EQ(unicode_category(0x6587), UnicodeCategory::Lo);   // 文, inside the block
  EXPECT_EQ(unicode_category(0x9FFF), UnicodeCategory::Lo);   // Last
  EXPECT_EQ(unicode_category(0xAC00 + 1234), UnicodeCategory::Lo);  // Hangul syllables
  EXPECT_EQ(unicode_category(0x20000 + 5000), UnicodeCategory::Lo); // CJK Extension B
  EXPECT_EQ(unicode_category(0xD900), UnicodeCategory::Cs);   // surrogates
  EXPECT_EQ(unicode_category(0xE123), UnicodeCategory::Co);   // private use
  EXPECT_EQ(unicode_category(0x10FFFD), UnicodeCategory::Co); // plane 16 private use, Last
}

TEST(UnicodeTable, ClassesUsedByPreTokenizers) {
  EXPECT_TRUE(unicode_is_letter(0x4E2D));   // 中
  EXPECT_TRUE(unicode_is_letter(0x0416));   // Ж
  EXPECT_FALSE(unicode_is_letter('1'));
  EXPECT_TRUE(unicode_is_number(0xFF14));   // fullwidth 4
  EXPECT_FALSE(unicode_is_number('x'));
  for (const uint32_t ws : {0x09u, 0x0Au, 0x0Du, 0x20u, 0x85u, 0xA0u, 0x1680u, 0x2003u, 0x2029u, 0x3000u}) {
    EXPECT_TRUE(unicode_is_whitespace(ws)) << std::hex << ws;
  }
  for (const uint32_t not_ws : {0x00u, 0x1Cu, 0x200Bu, 0x61u, 0x2581u}) {
    EXPECT_FALSE(unicode_is_whitespace(not_ws)) << std::hex << not_ws;
  }
}

}  // namespace
}  // namespace inferscope
