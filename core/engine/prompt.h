// Turning the user's prompt or chat turns into token ids for a model.
#pragma once
#include <string>
#include <vector>

#include "core/model/llama_model.h"

namespace inferscope {

// Plain text with BOS as the vocabulary asks; "" gives BOS alone (an error without a BOS token).
std::vector<TokenId> encode_prompt(const LlamaModel& model, const std::string& text);
// Turns rendered with the model's chat template, ready for the assistant's reply.
std::vector<TokenId> encode_chat(const LlamaModel& model, const std::vector<ChatMessage>& messages);

}  // namespace inferscope
