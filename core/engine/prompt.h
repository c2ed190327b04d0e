// Turning the user's prompt or chat turns into token ids for a model, and output tokens into text.
#pragma once
#include <string>
#include <vector>

#include "core/engine/engine_request.h"
#include "core/model/llama_model.h"

namespace inferscope {

// Plain text with BOS as the vocabulary asks; "" gives BOS alone (an error without a BOS token).
std::vector<TokenId> encode_prompt(const LlamaModel& model, const std::string& text);
// Turns rendered with the model's chat template, ready for the assistant's reply.
std::vector<TokenId> encode_chat(const LlamaModel& model, const std::vector<ChatMessage>& messages);
// A request's prompt: its turns, else its text, else its token ids (checked against the vocabulary).
// Throws std::invalid_argument for ids outside it, or a text that encodes to nothing.
std::vector<TokenId> encode_request(const LlamaModel& model, const EngineRequest& request);

// The text token `next` adds after `previous`: its piece, without the word-start space that
// SentencePiece's decoder drops from the first token after BOS.
std::string output_piece(const Tokenizer& tokenizer, TokenId previous, TokenId next);

}  // namespace inferscope
