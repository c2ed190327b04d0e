// UTF-8 decoding and encoding (strict: no overlong forms, surrogates or values past U+10FFFF),
// and the stream decoder that holds back an unfinished character.
#include "core/tokenizer/tokenizer.h"
#include "core/tokenizer/unicode.h"

namespace inferscope {
namespace {

struct Decoded {
  uint32_t cp = kReplacementChar;
  uint32_t len = 1;
  bool truncated = false;  // a valid start of a character that the input ends inside
};

// Allowed range of continuation byte `index` (1..3) after `lead`; the second byte's range is
// narrowed for the leads that would otherwise allow overlong forms, surrogates or > U+10FFFF.
bool continuation_ok(uint8_t lead, size_t index, uint8_t b) {
  uint8_t lo = 0x80, hi = 0xBF;
  if (index == 1) {
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  }
  return b >= lo && b <= hi;
}

Decoded decode_at(std::string_view s, size_t pos) {
  const auto lead = static_cast<uint8_t>(s[pos]);
  const size_t n = utf8_sequence_length(lead);
  if (n == 0) return {};
  if (n == 1) return {lead, 1, false};
  uint32_t cp = lead & (0xFF >> (n + 1));  // payload bits of the lead byte
  for (size_t i = 1; i < n; ++i) {
    if (pos + i >= s.size()) return {kReplacementChar, 1, true};
    const auto b = static_cast<uint8_t>(s[pos + i]);
    if (!continuation_ok(lead, i, b)) return {};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, static_cast<uint32_t>(n), false};
}

}  // namespace

size_t utf8_sequence_length(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;  // continuation bytes, C0/C1 (always overlong) and F5..FF
}

Utf8Char utf8_decode(std::string_view s, size_t pos) {
  const Decoded d = decode_at(s, pos);
  return {d.cp, d.len};
}

void utf8_append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string Utf8StreamDecoder::push(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  size_t pos = 0;
  while (pos < pending_.size()) {
    const Decoded d = decode_at(pending_, pos);
    if (d.truncated) break;  // wait for the rest of this character
    if (d.cp == kReplacementChar && d.len == 1) {
      utf8_append(out, kReplacementChar);  // an invalid byte never becomes valid later
    } else {
      out.append(pending_, pos, d.len);
    }
    pos += d.len;
  }
  pending_.erase(0, pos);
  return out;
}

std::string Utf8StreamDecoder::flush() {
  std::string out;
  if (!pending_.empty()) utf8_append(out, kReplacementChar);  // only an unfinished character is left
  pending_.clear();
  return out;
}

}  // namespace inferscope
