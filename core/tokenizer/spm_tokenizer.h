// SentencePiece-style BPE (tokenizer.ggml.model = "llama"): spaces become U+2581, adjacent pieces
// merge highest-score-first into vocabulary tokens, and leftovers fall back to <0xNN> byte tokens.
#pragma once
#include <array>
#include <string_view>
#include <unordered_map>

#include "core/tokenizer/tokenizer.h"

namespace inferscope {

class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(Vocab vocab);

 protected:
  void encode_fragment(std::string_view text, bool after_special, std::vector<TokenId>& out) const override;
  std::string piece_of(TokenId id) const override;

 private:
  TokenId find(std::string_view text) const;  // -1 when no token has this text
  void emit_bytes(std::string_view text, std::vector<TokenId>& out) const;

  std::unordered_map<std::string_view, TokenId> text_to_id_;  // views into vocab_.tokens
  std::array<TokenId, 256> byte_token_{};                     // <0xNN> token per byte, -1 if none
};

}  // namespace inferscope
