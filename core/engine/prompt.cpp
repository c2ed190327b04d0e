#include "core/engine/prompt.h"

#include <stdexcept>

namespace inferscope {

std::vector<TokenId> encode_prompt(const LlamaModel& model, const std::string& text) {
  const Vocab& vocab = model.tokenizer().vocab();
  if (text.empty()) {
    if (vocab.bos < 0) throw std::invalid_argument("an empty prompt needs a BOS token, and this vocabulary has none");
    return {vocab.bos};
  }
  std::vector<TokenId> ids = model.tokenizer().encode(text, true);
  if (ids.empty()) throw std::invalid_argument("the prompt encodes to no tokens");
  return ids;
}

std::vector<TokenId> encode_chat(const LlamaModel& model, const std::vector<ChatMessage>& messages) {
  const ChatTemplate& tmpl = model.chat_template();
  // Templates that spell BOS in the text get it from there, not from the tokenizer.
  return model.tokenizer().encode(tmpl.render(messages, true), !tmpl.bos_in_text, true);
}

std::vector<TokenId> encode_request(const LlamaModel& model, const EngineRequest& r) {
  if (!r.messages.empty()) return encode_chat(model, r.messages);
  if (r.prompt_tokens.empty()) return encode_prompt(model, r.prompt);
  const int32_t vocab = model.config().vocab_size;
  for (TokenId id : r.prompt_tokens) {
    if (id < 0 || id >= vocab) {
      throw std::invalid_argument("prompt token " + std::to_string(id) + " is outside the vocabulary (0.." +
                                  std::to_string(vocab - 1) + ")");
    }
  }
  return r.prompt_tokens;
}

std::string output_piece(const Tokenizer& tokenizer, TokenId previous, TokenId next) {
  std::string piece = tokenizer.token_to_piece(next);
  if (tokenizer.vocab().add_space_prefix && previous >= 0 && previous == tokenizer.vocab().bos && piece.starts_with(' ')) {
    piece.erase(0, 1);
  }
  return piece;
}

}  // namespace inferscope
