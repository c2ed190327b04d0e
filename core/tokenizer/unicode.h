// Unicode for the tokenizers: UTF-8 coding and general categories of code points. The category
// table is generated at build time from UnicodeData.txt and PropList.txt (gen_unicode_table.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace inferscope {

// The Unicode general categories (UnicodeData.txt field 2); Cn for unassigned code points.
enum class UnicodeCategory : uint8_t {
  Lu, Ll, Lt, Lm, Lo,          // letters (\p{L})
  Mn, Mc, Me,                  // marks
  Nd, Nl, No,                  // numbers (\p{N})
  Pc, Pd, Ps, Pe, Pi, Pf, Po,  // punctuation
  Sm, Sc, Sk, So,              // symbols
  Zs, Zl, Zp,                  // separators
  Cc, Cf, Cs, Co, Cn,          // other
};

UnicodeCategory unicode_category(uint32_t cp);
bool unicode_is_letter(uint32_t cp);
bool unicode_is_number(uint32_t cp);
bool unicode_is_whitespace(uint32_t cp);  // the White_Space property (regex \s)

// One code point read from UTF-8. An invalid or truncated sequence reads as U+FFFD of length 1,
// so every byte of the input belongs to exactly one code point.
struct Utf8Char {
  uint32_t cp = 0;
  uint32_t len = 0;  // bytes consumed
};
inline constexpr uint32_t kReplacementChar = 0xFFFD;

// Decodes the code point starting at byte `pos` (pos < s.size()).
Utf8Char utf8_decode(std::string_view s, size_t pos);
// The bytes of a lead byte's sequence (1..4), or 0 for a byte that cannot start one.
size_t utf8_sequence_length(uint8_t lead);
void utf8_append(std::string& out, uint32_t cp);

}  // namespace inferscope
