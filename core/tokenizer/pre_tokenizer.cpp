// Pre-tokenizer scanners. Each one walks code points of a range [begin, end) and cuts it into
// pieces the way the leftmost-first alternation of its regex would; lookaheads stop at `end`.
#include "core/tokenizer/pre_tokenizer.h"

#include <cstdint>

#include "core/tokenizer/unicode.h"

namespace inferscope {
namespace {

enum : uint8_t { kLetter = 1, kNumber = 2, kSpace = 4 };

// The text as code points with their byte offsets and category flags.
struct CodePoints {
  std::vector<uint32_t> cp;
  std::vector<size_t> offset;  // offset[i] = byte offset of cp[i]; offset[size] = text size
  std::vector<uint8_t> flags;

  explicit CodePoints(std::string_view text) {
    for (size_t pos = 0; pos < text.size();) {
      const Utf8Char c = utf8_decode(text, pos);
      cp.push_back(c.cp);
      offset.push_back(pos);
      flags.push_back(static_cast<uint8_t>((unicode_is_letter(c.cp) ? kLetter : 0) |
                                           (unicode_is_number(c.cp) ? kNumber : 0) |
                                           (unicode_is_whitespace(c.cp) ? kSpace : 0)));
      pos += c.len;
    }
    offset.push_back(text.size());
  }
  size_t size() const { return cp.size(); }
};

// One range being scanned; appends the end index of each piece to `ends`.
class Scanner {
 public:
  Scanner(const CodePoints& cps, size_t end, std::vector<size_t>& ends) : c_(cps), end_(end), ends_(ends) {}

  void gpt2(size_t pos) {
    while (pos < end_) {
      if (const size_t n = contraction(pos, false)) {
        pos = cut(pos + n);
        continue;
      }
      const size_t s = at(pos) == ' ' ? pos + 1 : pos;  // the optional leading space
      if (letter(s)) {
        pos = cut(run(s, [&](size_t i) { return letter(i); }));
      } else if (number(s)) {
        pos = cut(run(s, [&](size_t i) { return number(i); }));
      } else if (other(s)) {
        pos = cut(run(s, [&](size_t i) { return other(i); }));
      } else {
        pos = cut(whitespace(pos, false));
      }
    }
  }

  // Llama-3 (max_digits 3) and Qwen2 (max_digits 1).
  void llama3(size_t pos, size_t max_digits) {
    while (pos < end_) {
      const uint32_t c = at(pos);
      if (const size_t n = contraction(pos, true)) {
        pos = cut(pos + n);
      } else if (!newline(pos) && !number(pos) && (letter(pos) || letter(pos + 1))) {
        pos = cut(run(pos + 1, [&](size_t i) { return letter(i); }));  // optional prefix, then letters
      } else if (number(pos)) {
        size_t e = pos;
        while (e - pos < max_digits && number(e)) ++e;
        pos = cut(e);
      } else if (const size_t s = c == ' ' ? pos + 1 : pos; other(s)) {
        const size_t e = run(s, [&](size_t i) { return other(i); });
        pos = cut(run(e, [&](size_t i) { return newline(i); }));
      } else {
        pos = cut(whitespace(pos, true));
      }
    }
  }

 private:
  uint32_t at(size_t i) const { return i < end_ ? c_.cp[i] : 0; }
  bool has(size_t i, uint8_t flag) const { return i < end_ && (c_.flags[i] & flag); }
  bool letter(size_t i) const { return has(i, kLetter); }
  bool number(size_t i) const { return has(i, kNumber); }
  bool space(size_t i) const { return has(i, kSpace); }
  bool other(size_t i) const { return i < end_ && !(c_.flags[i] & (kLetter | kNumber | kSpace)); }
  bool newline(size_t i) const { return i < end_ && (c_.cp[i] == '\r' || c_.cp[i] == '\n'); }

  template <typename Pred>
  size_t run(size_t i, Pred pred) const {
    while (pred(i)) ++i;
    return i;
  }

  size_t cut(size_t end) {
    ends_.push_back(end);
    return end;
  }

  // Length of 's 't 'm 'd 're 've 'll at pos (0 if none); ASCII case folding when asked.
  size_t contraction(size_t pos, bool fold_case) const {
    if (at(pos) != '\'') return 0;
    auto ch = [&](size_t i) {
      const uint32_t c = at(i);
      return fold_case && c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
    };
    const uint32_t a = ch(pos + 1), b = ch(pos + 2);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
  }

  // End of the whitespace piece starting at pos: with `newlines`, \s*[\r\n]+ (up to the last
  // newline of the run) wins; then \s+(?!\S) leaves the last space to start the next piece when
  // something follows; else the whole run.
  size_t whitespace(size_t pos, bool newlines) const {
    size_t e = pos, after_newline = 0;
    for (; space(e); ++e) {
      if (newlines && newline(e)) after_newline = e + 1;
    }
    if (after_newline) return after_newline;
    if (e - pos > 1 && e < end_) return e - 1;
    return e;
  }

  const CodePoints& c_;
  size_t end_;
  std::vector<size_t>& ends_;
};

}  // namespace

std::optional<PreTokenizer> pre_tokenizer_from_name(std::string_view name) {
  if (name == "default" || name == "gpt2" || name == "gpt-2" || name == "phi-2" || name == "mpt" ||
      name == "olmo") {
    return PreTokenizer::Gpt2;
  }
  if (name == "smollm" || name == "starcoder" || name == "refact" || name == "codeshell") {
    return PreTokenizer::SmolLM;
  }
  if (name == "llama3" || name == "llama-v3" || name == "llama-bpe" || name == "dbrx" || name == "smaug-bpe") {
    return PreTokenizer::Llama3;
  }
  if (name == "qwen2" || name == "deepseek-r1-qwen" || name == "stablelm2") return PreTokenizer::Qwen2;
  return std::nullopt;
}

std::vector<std::string_view> pre_tokenize(PreTokenizer kind, std::string_view text) {
  const CodePoints cps(text);
  std::vector<size_t> ends;
  // Scans [begin, end) as one range: a piece never crosses `end`.
  auto scan = [&](size_t begin, size_t end) {
    Scanner s(cps, end, ends);
    switch (kind) {
      case PreTokenizer::Gpt2:
      case PreTokenizer::SmolLM: s.gpt2(begin); break;
      case PreTokenizer::Llama3: s.llama3(begin, 3); break;
      case PreTokenizer::Qwen2: s.llama3(begin, 1); break;
    }
  };
  if (kind == PreTokenizer::SmolLM) {
    // First pass: each number code point is a range of its own; the text between is one range.
    size_t begin = 0;
    for (size_t i = 0; i < cps.size(); ++i) {
      if (!(cps.flags[i] & kNumber)) continue;
      if (begin < i) scan(begin, i);
      ends.push_back(i + 1);
      begin = i + 1;
    }
    if (begin < cps.size()) scan(begin, cps.size());
  } else {
    scan(0, cps.size());
  }
  std::vector<std::string_view> pieces;
  pieces.reserve(ends.size());
  size_t start = 0;
  for (const size_t e : ends) {
    pieces.push_back(text.substr(cps.offset[start], cps.offset[e] - cps.offset[start]));
    start = e;
  }
  return pieces;
}

}  // namespace inferscope
