// SentencePiece-style tokenization: a linked list of symbols (initially UTF-8 characters) and a
// max-heap of adjacent pairs whose concatenation is a token, keyed by that token's score.
#include "core/tokenizer/spm_tokenizer.h"

#include <queue>

#include "core/tokenizer/unicode.h"

namespace inferscope {
namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581, SentencePiece's space

struct Symbol {
  size_t offset, len;  // bytes of the escaped text; len 0 once merged into its left neighbour
  int prev, next;      // -1 at the ends
};

struct Pair {
  float score;
  int left, right;
  size_t len;  // bytes of left + right when queued: a mismatch later means the pair is stale
};

// Highest score first; among equal scores, the leftmost pair.
struct PairOrder {
  bool operator()(const Pair& a, const Pair& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
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

  std::vector<Symbol> symbols;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = utf8_decode(text, pos).len;
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({pos, len, index - 1, pos + len < text.size() ? index + 1 : -1});
    pos += len;
  }

  std::priority_queue<Pair, std::vector<Pair>, PairOrder> queue;
  auto try_pair = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const size_t len = symbols[left].len + symbols[right].len;
    const TokenId id = find(std::string_view(text).substr(symbols[left].offset, len));
    if (id < 0) return;
    queue.push({vocab_.scores.empty() ? 0.0f : vocab_.scores[id], left, right, len});
  };
  for (size_t i = 1; i < symbols.size(); ++i) try_pair(static_cast<int>(i) - 1, static_cast<int>(i));

  while (!queue.empty()) {
    const Pair p = queue.top();
    queue.pop();
    Symbol& left = symbols[p.left];
    Symbol& right = symbols[p.right];
    if (left.len == 0 || right.len == 0 || left.next != p.right || left.len + right.len != p.len) continue;
    left.len += right.len;  // the right symbol joins the left one and leaves the list
    right.len = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = p.left;
    try_pair(left.prev, p.left);
    try_pair(p.left, left.next);
  }

  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    const std::string_view piece = std::string_view(text).substr(symbols[i].offset, symbols[i].len);
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
