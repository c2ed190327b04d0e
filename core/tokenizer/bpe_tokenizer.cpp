// Byte-level BPE: per pre-tokenized piece, tokens (initially one per byte) merge pairwise, the pair
// whose merge has the lowest rank first (pair_merges.h).
#include "core/tokenizer/bpe_tokenizer.h"

#include "core/gguf/gguf_file.h"
#include "core/tokenizer/pair_merges.h"
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

  // One token per byte (-1 for a byte the vocabulary lacks: it never merges).
  std::vector<TokenId> ids;
  ids.reserve(piece.size());
  for (const char c : piece) ids.push_back(byte_token_[static_cast<uint8_t>(c)]);
  const auto rank_of = [&](int left, int right) -> std::optional<Merge> {
    if (ids[static_cast<size_t>(left)] < 0 || ids[static_cast<size_t>(right)] < 0) return std::nullopt;
    const auto it = merges_.find(pair_key(ids[static_cast<size_t>(left)], ids[static_cast<size_t>(right)]));
    if (it == merges_.end()) return std::nullopt;
    return it->second;
  };
  const auto join = [&](int left, int, const Merge& merge) { ids[static_cast<size_t>(left)] = merge.result; };
  for (const int i : merge_adjacent_pairs<Merge>(static_cast<int>(ids.size()), rank_of, join)) {
    if (ids[static_cast<size_t>(i)] >= 0) {
      out.push_back(ids[static_cast<size_t>(i)]);
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
