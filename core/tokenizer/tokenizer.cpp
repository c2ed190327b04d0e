// Tokenizer: special-token splitting, BOS, decoding, and choosing the tokenizer a vocabulary names.
#include "core/tokenizer/tokenizer.h"

#include <algorithm>
#include <stdexcept>

#include "core/gguf/gguf_file.h"
#include "core/tokenizer/bpe_tokenizer.h"
#include "core/tokenizer/spm_tokenizer.h"

namespace inferscope {
namespace {

bool is_special(TokenType t) {
  return t == TokenType::CONTROL || t == TokenType::USER_DEFINED || t == TokenType::UNKNOWN;
}

// A run of the input: plain text (token < 0) or one special token.
struct Fragment {
  size_t begin, end;
  TokenId token;
};

// Carves each special token (longest spelling first) out of the text fragments that remain.
void split_specials(std::string_view text, const std::vector<TokenId>& specials, const Vocab& vocab,
                    std::vector<Fragment>& fragments) {
  for (const TokenId id : specials) {
    const std::string& spelling = vocab.tokens[id];
    std::vector<Fragment> next;
    for (const Fragment& f : fragments) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      const std::string_view window = text.substr(0, f.end);
      size_t pos = f.begin;
      for (size_t m = window.find(spelling, pos); m != std::string_view::npos; m = window.find(spelling, pos)) {
        if (m > pos) next.push_back({pos, m, -1});
        next.push_back({m, m + spelling.size(), id});
        pos = m + spelling.size();
      }
      if (pos < f.end) next.push_back({pos, f.end, -1});
    }
    fragments = std::move(next);
  }
}

}  // namespace

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) {
  const size_t n = vocab_.tokens.size();
  if (vocab_.types.empty()) vocab_.types.assign(n, TokenType::NORMAL);  // hand-built vocabularies
  if (vocab_.types.size() != n || (!vocab_.scores.empty() && vocab_.scores.size() != n)) {
    throw GgufError("tokenizer.ggml.token_type/scores: sizes differ from the " + std::to_string(n) + " tokens");
  }
  if (vocab_.token_to_id.empty()) {
    for (size_t i = 0; i < n; ++i) vocab_.token_to_id.emplace(vocab_.tokens[i], static_cast<TokenId>(i));
  }
  for (TokenId id = 0; id < vocab_.size(); ++id) {
    if (vocab_.tokens[id].empty()) continue;
    if (is_special(vocab_.types[id])) specials_.push_back(id);
    if (vocab_.types[id] == TokenType::USER_DEFINED) user_defined_.push_back(id);
  }
  const auto longest_first = [&](TokenId a, TokenId b) { return vocab_.tokens[a].size() > vocab_.tokens[b].size(); };
  std::stable_sort(specials_.begin(), specials_.end(), longest_first);
  std::stable_sort(user_defined_.begin(), user_defined_.end(), longest_first);
}

std::vector<TokenId> Tokenizer::encode(std::string_view text, bool add_bos, bool parse_special) const {
  std::vector<Fragment> fragments;
  if (!text.empty()) fragments.push_back({0, text.size(), -1});
  // user-defined pieces are always their own tokens (llama.cpp and Hugging Face carve them out first)
  split_specials(text, parse_special ? specials_ : user_defined_, vocab_, fragments);

  std::vector<TokenId> out;
  if (add_bos && vocab_.add_bos && vocab_.bos >= 0) out.push_back(vocab_.bos);
  bool after_special = true;
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      out.push_back(f.token);
      after_special = true;
    } else {
      encode_fragment(text.substr(f.begin, f.end - f.begin), after_special, out);
      after_special = false;
    }
  }
  return out;
}

std::string Tokenizer::token_to_piece(TokenId id, bool render_special) const {
  if (id < 0 || id >= vocab_.size()) {
    throw std::out_of_range("token id " + std::to_string(id) + " outside the vocabulary of " +
                            std::to_string(vocab_.size()));
  }
  const TokenType type = vocab_.types[id];
  // user-defined pieces ("\n" in Gemma's vocabulary) are text; control and unknown ones show on request
  if (type == TokenType::USER_DEFINED) return vocab_.tokens[id];
  if (is_special(type)) return render_special ? vocab_.tokens[id] : std::string();
  if (type == TokenType::BYTE) {
    const int byte = byte_token_value(vocab_.tokens[id]);
    if (byte >= 0) return std::string(1, static_cast<char>(byte));
  }
  return piece_of(id);
}

std::string Tokenizer::decode(const std::vector<TokenId>& ids, bool render_special) const {
  std::string text;
  bool strip_space = vocab_.add_space_prefix;  // the prefix encode added before the first text
  for (const TokenId id : ids) {
    std::string piece = token_to_piece(id, render_special);
    if (strip_space && !is_special(vocab_.types[id])) {
      if (!piece.empty() && piece[0] == ' ') piece.erase(0, 1);
      strip_space = false;
    }
    text += piece;
  }
  return text;
}

std::unique_ptr<Tokenizer> Tokenizer::from_vocab(Vocab vocab) {
  if (vocab.model == "llama") return std::make_unique<SpmTokenizer>(std::move(vocab));
  if (vocab.model == "gpt2") return std::make_unique<BpeTokenizer>(std::move(vocab));
  throw GgufError("tokenizer.ggml.model: unsupported tokenizer '" + vocab.model + "' (supported: llama, gpt2)");
}

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const GgufFile& file) {
  Vocab vocab = Vocab::from_gguf(file);
  try {
    return from_vocab(std::move(vocab));
  } catch (const GgufError& e) {
    throw GgufError(file.path() + ": " + e.what());  // name the file the vocabulary came from
  }
}

}  // namespace inferscope
