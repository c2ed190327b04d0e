// The vocabulary of a GGUF model: tokens, scores, types, special ids and the tokenizer's flags.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace inferscope {

class GgufFile;
using TokenId = int32_t;

// GGUF tokenizer.ggml.token_type values.
enum class TokenType : int32_t { UNDEFINED = 0, NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6 };

// The byte a BYTE token spelled "<0xNN>" stands for; -1 when the text is not of that form.
int byte_token_value(std::string_view text);

struct Vocab {
  std::string model;  // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte-level BPE)
  std::string pre;    // tokenizer.ggml.pre (gpt2 only; "default" when absent)
  std::vector<std::string> tokens;
  std::vector<float> scores;      // empty for gpt2 vocabularies
  std::vector<TokenType> types;
  std::vector<std::string> merges;  // "a b" pairs, rank = index (gpt2)
  TokenId bos = -1, eos = -1, unk = -1, pad = -1, eot = -1;  // -1 when the model has none
  bool add_bos = false;           // default true for llama (SentencePiece) and Llama-3 BPE vocabularies
  bool add_eos = false;
  bool add_space_prefix = false;  // default true for SentencePiece
  std::unordered_map<std::string, TokenId> token_to_id;

  int32_t size() const { return static_cast<int32_t>(tokens.size()); }
  bool is_control(TokenId id) const;  // CONTROL or USER_DEFINED: rendered as text only on request
  bool is_eog(TokenId id) const;      // ends generation: eos, eot, or a control token like <|im_end|>

  // Reads tokenizer.ggml.*; throws GgufError naming the file and key when a field is bad.
  static Vocab from_gguf(const GgufFile& file);
};

}  // namespace inferscope
