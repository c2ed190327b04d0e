// SentencePiece-style tokenization: symbols (initially UTF-8 characters) merge pairwise where their
// concatenation is a token, the pair whose token scores highest first (pair_merges.h).
#include "core/tokenizer/spm_tokenizer.h"

#include "core/tokenizer/pair_merges.h"
#include "core/tokenizer/unicode.h"

namespace inferscope {
namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// A merge's priority: the higher its token's score, the sooner.
struct HigherScore {
  float score;
  bool operator<(const HigherScore& other) const { return score > other.score; }
};

}  // namespace

SpmTokenizer::SpmTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)) {
  byte_token_.fill(-1);
  text_to_id_.reserve(vocab_.tokens.size());
  for (TokenId id = 0; id < vocab_.size(); ++id) {
    text_to_id_.emplace(vocab_.tokens[id], id);  // first wins
    const int byte = vocab_.types[id] == TokenType::BYTE ? byte_token_value(vocab_.tokens[id]) : -1;
    if (byte >= 0 && byte_token_[byte] < 0) byte_token_[byte] = id;
  }
}

TokenId SpmTokenizer::find(std::string_view text) const {
  const auto it = text_to_id_.find(text);
  return it == text_to_id_.end() ? -1 : it->second;
}

void SpmTokenizer::emit_bytes(std::string_view text, std::vector<TokenId>& out) const {
  for (const char c : text) {
    const TokenId id = byte_token_[static_cast<uint8_t>(c)];
    if (id >= 0) {
      out.push_back(id);
    } else if (vocab_.unk >= 0) {
      out.push_back(vocab_.unk);  // no byte fallback in this vocabulary
    }
  }
}

void SpmTokenizer::encode_fragment(std::string_view raw, bool after_special, std::vector<TokenId>& out) const {
  // Escape spaces, with one added in front where the model expects a word boundary.
  std::string text;
  if (vocab_.add_space_prefix && after_special) text += kSpaceMarker;
  for (const char c : raw) {
    if (c == ' ') {
      text += kSpaceMarker;
    } else {
      text += c;
    }
  }

  // One symbol per character: its bytes in the escaped text.
  struct Span {
    size_t offset, len;
  };
  std::vector<Span> spans;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = utf8_decode(text, pos).len;
    spans.push_back({pos, len});
    pos += len;
  }
  const auto text_of = [&](const Span& s) { return std::string_view(text).substr(s.offset, s.len); };
  const auto rank_of = [&](int left, int right) -> std::optional<HigherScore> {
    const Span& l = spans[static_cast<size_t>(left)];
    const TokenId id = find(text_of({l.offset, l.len + spans[static_cast<size_t>(right)].len}));
    if (id < 0) return std::nullopt;
    return HigherScore{vocab_.scores.empty() ? 0.0f : vocab_.scores[static_cast<size_t>(id)]};
  };
  const auto join = [&](int left, int right, const HigherScore&) {
    spans[static_cast<size_t>(left)].len += spans[static_cast<size_t>(right)].len;
  };
  for (const int i : merge_adjacent_pairs<HigherScore>(static_cast<int>(spans.size()), rank_of, join)) {
    const std::string_view piece = text_of(spans[static_cast<size_t>(i)]);
    const TokenId id = find(piece);
    if (id >= 0) {
      out.push_back(id);
    } else {
      emit_bytes(piece, out);  // a character the vocabulary lacks
    }
  }
}

std::string SpmTokenizer::piece_of(TokenId id) const {
  const std::string& token = vocab_.tokens[id];
  std::string piece;
  for (size_t pos = 0; pos < token.size();) {
    if (token.compare(pos, kSpaceMarker.size(), kSpaceMarker) == 0) {
      piece += ' ';
      pos += kSpaceMarker.size();
    } else {
      piece += token[pos++];
    }
  }
  return piece;
}

}  // namespace inferscope
