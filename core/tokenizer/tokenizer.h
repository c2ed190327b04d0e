// Text <-> token ids for the two GGUF tokenizer families.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/tokenizer/vocab.h"

namespace inferscope {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  Tokenizer(const Tokenizer&) = delete;  // subclasses keep views into vocab_
  Tokenizer& operator=(const Tokenizer&) = delete;
  const Vocab& vocab() const { return vocab_; }

  // add_bos: prepend BOS when the vocabulary asks for it (vocab().add_bos) and has one.
  // parse_special: text that spells a CONTROL or UNKNOWN token ("<|im_start|>") becomes that one
  // token; text that spells a USER_DEFINED token always does. Where spellings overlap, longer tokens
  // are taken first.
  std::vector<TokenId> encode(std::string_view text, bool add_bos, bool parse_special = true) const;

  // The raw bytes a token stands for (byte tokens give their byte, USER_DEFINED tokens their text;
  // CONTROL and UNKNOWN tokens give their text only when render_special is set, else nothing), as
  // llama.cpp's token_to_piece. May be an incomplete UTF-8 sequence. Throws std::out_of_range for an id outside the vocabulary.
  std::string token_to_piece(TokenId id, bool render_special = false) const;
  // Concatenated pieces; with add_space_prefix, the space encode put before the first text token
  // is removed again, so decode(encode(s)) == s.
  std::string decode(const std::vector<TokenId>& ids, bool render_special = false) const;

  // Builds the tokenizer the vocabulary names ("llama" or "gpt2"); throws GgufError for an unknown
  // model or pre-tokenizer (from_gguf's message names the file).
  static std::unique_ptr<Tokenizer> from_gguf(const GgufFile& file);
  static std::unique_ptr<Tokenizer> from_vocab(Vocab vocab);

 protected:
  explicit Tokenizer(Vocab vocab);
  // Encodes text that contains no special tokens. after_special: the text starts the input or
  // follows a special token (where SentencePiece adds its space prefix).
  virtual void encode_fragment(std::string_view text, bool after_special, std::vector<TokenId>& out) const = 0;
  // The bytes of a NORMAL (or otherwise non-special, non-byte) token.
  virtual std::string piece_of(TokenId id) const = 0;
  Vocab vocab_;

 private:
  std::vector<TokenId> specials_;      // tokens parse_special matches, longest spelling first
  std::vector<TokenId> user_defined_;  // the USER_DEFINED ones among them, matched without parse_special too
};

// Turns a stream of token pieces into text that never ends inside a UTF-8 character.
class Utf8StreamDecoder {
 public:
  // Appends bytes; returns the longest prefix of pending bytes that forms whole characters
  // (bytes that can never start or continue a character come out as U+FFFD at once).
  std::string push(std::string_view bytes);
  // What is left at the end of the stream (invalid or incomplete bytes become U+FFFD).
  std::string flush();

 private:
  std::string pending_;
};

}  // namespace inferscope
