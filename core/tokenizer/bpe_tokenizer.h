// Byte-level BPE (tokenizer.ggml.model = "gpt2"): the pre-tokenizer named by tokenizer.ggml.pre
// splits the text, each piece's bytes map to characters through the GPT-2 byte table, and
// adjacent tokens merge lowest-rank-first by tokenizer.ggml.merges.
#pragma once
#include <array>
#include <cstdint>
#include <unordered_map>

#include "core/tokenizer/pre_tokenizer.h"
#include "core/tokenizer/tokenizer.h"

namespace inferscope {

// GPT-2's reversible byte <-> character table: printable bytes stand for themselves, the other
// 68 take the code points 256, 257, ... in byte order.
uint32_t gpt2_byte_to_code_point(uint8_t byte);
int gpt2_code_point_to_byte(uint32_t cp);  // -1 for a code point no byte maps to

class BpeTokenizer final : public Tokenizer {
 public:
  // Throws GgufError for a pre-tokenizer it does not know.
  explicit BpeTokenizer(Vocab vocab);

 protected:
  void encode_fragment(std::string_view text, bool after_special, std::vector<TokenId>& out) const override;
  std::string piece_of(TokenId id) const override;

 private:
  struct Merge {
    int32_t rank;
    TokenId result;
    bool operator<(const Merge& other) const { return rank < other.rank; }  // the lower rank merges first
  };
  static uint64_t pair_key(TokenId left, TokenId right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  void encode_piece(std::string_view piece, std::vector<TokenId>& out) const;

  PreTokenizer pre_;
  bool ignore_merges_;                         // Llama-3: a piece that is itself a token is taken whole
  std::array<TokenId, 256> byte_token_{};      // the token of each byte's character, -1 if none
  std::unordered_map<uint64_t, Merge> merges_;  // (left, right) token ids -> rank and merged token
};

}  // namespace inferscope
