// Byte-level BPE: per pre-tokenized piece, a linked list of tokens (initially one per byte) and
// a min-heap of adjacent pairs that have a merge, keyed by the merge's rank.
#include "core/tokenizer/bpe_tokenizer.h"

#include <queue>

#include "core/gguf/gguf_file.h"
#include "core/tokenizer/unicode.h"

namespace inferscope {
namespace {

bool gpt2_printable(uint32_t b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE; }

struct ByteTables {
  std::array<uint32_t, 256> to_cp{};
  std::array<int16_t, 256 + 68> to_byte{};  // indexed by code point; -1 where no byte maps

  ByteTables() {
    to_byte.fill(-1);
    uint32_t next = 256;  // where the non-printable bytes go, in byte order
    for (uint32_t b = 0; b < 256; ++b) {
      to_cp[b] = gpt2_printable(b) ? b : next++;
      to_byte[to_cp[b]] = static_cast<int16_t>(b);
    }
  }
};

const ByteTables& byte_tables() {
  static const ByteTables tables;
  return tables;
}

struct Symbol {
  TokenId id;      // -1 once merged into its left neighbour (or for a byte with no token)
  int prev, next;  // -1 at the ends
};

struct Pair {
  int32_t rank;
  int left, right;
  TokenId left_id, right_id;  // ids when queued: a mismatch later means the pair is stale
  TokenId result;
};

// Lowest rank first; among equal ranks, the leftmost pair.
struct PairOrder {
  bool operator()(const Pair& a, const Pair& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

uint32_t gpt2_byte_to_code_point(uint8_t byte) { return byte_tables().to_cp[byte]; }

int gpt2_code_point_to_byte(uint32_t cp) {
  return cp < byte_tables().to_byte.size() ? byte_tables().to_byte[cp] : -1;
}

BpeTokenizer::BpeTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)) {
  const auto pre = pre_tokenizer_from_name(vocab_.pre);
  if (!pre) throw GgufError("tokenizer.ggml.pre: unsupported pre-tokenizer '" + vocab_.pre + "'");
  pre_ = *pre;
  ignore_merges_ = pre_ == PreTokenizer::Llama3;

  for (uint32_t b = 0; b < 256; ++b) {
    std::string ch;
    utf8_append(ch, gpt2_byte_to_code_point(static_cast<uint8_t>(b)));
    const auto it = vocab_.token_to_id.find(ch);
    byte_token_[b] = it == vocab_.token_to_id.end() ? -1 : it->second;
  }

  // A merge whose parts or result are not tokens can never apply to token ids: skip it.
  merges_.reserve(vocab_.merges.size());
  auto id_of = [&](const std::string& s) {
    const auto it = vocab_.token_to_id.find(s);
    return it == vocab_.token_to_id.end() ? -1 : it->second;
  };
  for (size_t rank = 0; rank < vocab_.merges.size(); ++rank) {
    const std::string& m = vocab_.merges[rank];
    const size_t space = m.find(' ', 1);
    if (space == std::string::npos) continue;
    const std::string left = m.substr(0, space), right = m.substr(space + 1);
    const TokenId l = id_of(left), r = id_of(right), result = id_of(left + right);
    if (l >= 0 && r >= 0 && result >= 0) merges_.emplace(pair_key(l, r), Merge{static_cast<int32_t>(rank), result});
  }
}

void BpeTokenizer::encode_fragment(std::string_view text, bool, std::vector<TokenId>& out) const {
  for (const std::string_view piece : pre_tokenize(pre_, text)) encode_piece(piece, out);
}

void BpeTokenizer::encode_piece(std::string_view piece, std::vector<TokenId>& out) const {
  if (ignore_merges_) {
    std::string mapped;
    for (const char c : piece) utf8_append(mapped, gpt2_byte_to_code_point(static_cast<uint8_t>(c)));
    const auto it = vocab_.token_to_id.find(mapped);
    if (it != vocab_.token_to_id.end()) {
      out.push_back(it->second);
      return;
    }
  }

  std::vector<Symbol> symbols;
  symbols.reserve(piece.size());
  for (size_t i = 0; i < piece.size(); ++i) {
    const int index = static_cast<int>(i);
    symbols.push_back({byte_token_[static_cast<uint8_t>(piece[i])], index - 1,
                       i + 1 < piece.size() ? index + 1 : -1});
  }

  std::priority_queue<Pair, std::vector<Pair>, PairOrder> queue;
  auto try_pair = [&](int left, int right) {
    if (left < 0 || right < 0 || symbols[left].id < 0 || symbols[right].id < 0) return;
    const auto it = merges_.find(pair_key(symbols[left].id, symbols[right].id));
    if (it == merges_.end()) return;
    queue.push({it->second.rank, left, right, symbols[left].id, symbols[right].id, it->second.result});
  };
  for (size_t i = 1; i < symbols.size(); ++i) try_pair(static_cast<int>(i) - 1, static_cast<int>(i));

  while (!queue.empty()) {
    const Pair p = queue.top();
    queue.pop();
    Symbol& left = symbols[p.left];
    Symbol& right = symbols[p.right];
    if (left.next != p.right || left.id != p.left_id || right.id != p.right_id) continue;
    left.id = p.result;  // the right symbol joins the left one and leaves the list
    right.id = -1;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = p.left;
    try_pair(left.prev, p.left);
    try_pair(p.left, left.next);
  }

  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    if (symbols[i].id >= 0) {
      out.push_back(symbols[i].id);
    } else if (vocab_.unk >= 0) {
      out.push_back(vocab_.unk);  // a byte whose character the vocabulary lacks
    }
  }
}

std::string BpeTokenizer::piece_of(TokenId id) const {
  const std::string& token = vocab_.tokens[id];
  std::string piece;
  for (size_t pos = 0; pos < token.size();) {
    const Utf8Char c = utf8_decode(token, pos);
    const int byte = gpt2_code_point_to_byte(c.cp);
    if (byte >= 0) {
      piece += static_cast<char>(byte);
    } else {
      piece.append(token, pos, c.len);  // not from the byte table: keep the character as it is
    }
    pos += c.len;
  }
  return piece;
}

}  // namespace inferscope
