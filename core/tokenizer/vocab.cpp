// Vocab::from_gguf: reads and checks the tokenizer.ggml.* metadata of a GGUF file.
#include "core/tokenizer/vocab.h"

#include <array>
#include <string_view>

#include "core/gguf/gguf_file.h"

namespace inferscope {
namespace {

// Control tokens that end an assistant turn in the common chat formats.
constexpr std::array<std::string_view, 4> kEotTexts = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>"};
// Every control token that ends generation (end of turn, end of text, end of message).
constexpr std::array<std::string_view, 6> kEogTexts = {"<|eot_id|>", "<|im_end|>", "<|end|>",
                                                       "<end_of_turn>", "<|endoftext|>", "<|eom_id|>"};

[[noreturn]] void bad_key(const GgufFile& file, const std::string& key, const std::string& what) {
  throw GgufError(file.path() + ": metadata " + key + ": " + what);
}

// Converts each item of an optional array with `convert`; checks it has n_expected items.
template <typename T, typename F>
std::vector<T> read_array(const GgufFile& file, const std::string& key, size_t n_expected, F convert) {
  std::vector<T> out;
  if (!file.has(key)) return out;
  const GgufArray& arr = file.get_array(key);
  if (n_expected != 0 && arr.items.size() != n_expected) {
    bad_key(file, key, std::to_string(arr.items.size()) + " items, expected " + std::to_string(n_expected));
  }
  out.reserve(arr.items.size());
  try {
    for (const GgufValue& v : arr.items) out.push_back(convert(v));
  } catch (const std::runtime_error& e) {
    bad_key(file, key, std::string("item ") + std::to_string(out.size()) + ": " + e.what());
  }
  return out;
}

// A special token id: the key's value when present and inside the vocabulary, else -1.
TokenId read_id(const GgufFile& file, const std::string& key, TokenId fallback, int32_t n_tokens) {
  const int64_t id = file.get_int_or(key, fallback);
  return (id >= 0 && id < n_tokens) ? static_cast<TokenId>(id) : -1;
}

}  // namespace

int byte_token_value(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(text[3]), lo = hex(text[4]);
  return (hi < 0 || lo < 0) ? -1 : hi * 16 + lo;
}

bool Vocab::is_control(TokenId id) const {
  if (id < 0 || id >= size()) return false;
  return types[id] == TokenType::CONTROL || types[id] == TokenType::USER_DEFINED;
}

bool Vocab::is_eog(TokenId id) const {
  if (id < 0 || id >= size()) return false;
  if (id == eos || id == eot) return true;
  if (types[id] != TokenType::CONTROL) return false;
  for (const auto text : kEogTexts) {
    if (tokens[id] == text) return true;
  }
  return false;
}

Vocab Vocab::from_gguf(const GgufFile& file) {
  Vocab v;
  v.model = file.get_string("tokenizer.ggml.model");
  v.pre = file.get_string_or("tokenizer.ggml.pre", "default");
  v.tokens = read_array<std::string>(file, "tokenizer.ggml.tokens", 0,
                                     [](const GgufValue& x) { return x.as_string(); });
  if (v.tokens.empty()) bad_key(file, "tokenizer.ggml.tokens", "missing or empty");
  const size_t n = v.tokens.size();
  v.scores = read_array<float>(file, "tokenizer.ggml.scores", n,
                               [](const GgufValue& x) { return static_cast<float>(x.as_float()); });
  v.types = read_array<TokenType>(file, "tokenizer.ggml.token_type", n, [](const GgufValue& x) {
    const int64_t t = x.as_int();
    if (t < 0 || t > static_cast<int64_t>(TokenType::BYTE)) throw std::runtime_error("bad token type " + std::to_string(t));
    return static_cast<TokenType>(t);
  });
  if (v.types.empty()) v.types.assign(n, TokenType::NORMAL);
  v.merges = read_array<std::string>(file, "tokenizer.ggml.merges", 0,
                                     [](const GgufValue& x) { return x.as_string(); });
  if (v.model == "gpt2" && v.merges.empty()) bad_key(file, "tokenizer.ggml.merges", "missing for a gpt2 vocabulary");

  const bool spm = v.model == "llama";
  const auto n_tokens = static_cast<int32_t>(n);
  // SentencePiece vocabularies put <unk>, <s>, </s> at 0, 1, 2 when the file does not say.
  v.bos = read_id(file, "tokenizer.ggml.bos_token_id", spm ? 1 : -1, n_tokens);
  v.eos = read_id(file, "tokenizer.ggml.eos_token_id", spm ? 2 : -1, n_tokens);
  v.unk = read_id(file, "tokenizer.ggml.unknown_token_id", spm ? 0 : -1, n_tokens);
  v.pad = read_id(file, "tokenizer.ggml.padding_token_id", -1, n_tokens);
  v.eot = read_id(file, "tokenizer.ggml.eot_token_id", -1, n_tokens);

  // Llama-3 BPE vocabularies, like SentencePiece ones, start with BOS unless the file says not.
  const bool bos_by_default = spm || v.pre == "llama3" || v.pre == "llama-v3" || v.pre == "llama-bpe";
  v.add_bos = file.get_bool_or("tokenizer.ggml.add_bos_token", bos_by_default) && v.bos >= 0;
  v.add_eos = file.get_bool_or("tokenizer.ggml.add_eos_token", false) && v.eos >= 0;
  v.add_space_prefix = file.get_bool_or("tokenizer.ggml.add_space_prefix", spm);

  v.token_to_id.reserve(n);
  for (size_t i = 0; i < n; ++i) v.token_to_id.emplace(v.tokens[i], static_cast<TokenId>(i));  // first wins
  if (v.eot < 0) {
    for (const auto text : kEotTexts) {
      const auto it = v.token_to_id.find(std::string(text));
      if (it != v.token_to_id.end() && v.types[it->second] == TokenType::CONTROL) {
        v.eot = it->second;
        break;
      }
    }
  }
  return v;
}

}  // namespace inferscope
