#include "core/server/openai_response.h"

#include <nlohmann/json.hpp>

namespace inferscope {
namespace {

using nlohmann::json;

json token_bytes(const std::string& token) {
  json bytes = json::array();
  for (unsigned char c : token) bytes.push_back(c);
  return bytes;
}

// Chat's logprobs: {"content": [{token, logprob, bytes, top_logprobs: [...]}]}.
json chat_logprobs(const std::vector<AnswerLogprob>& tokens) {
  json content = json::array();
  for (const AnswerLogprob& t : tokens) {
    json top = json::array();
    for (const auto& [token, logprob] : t.top) top.push_back({{"token", token}, {"logprob", logprob}, {"bytes", token_bytes(token)}});
    content.push_back({{"token", t.token}, {"logprob", t.logprob}, {"bytes", token_bytes(t.token)}, {"top_logprobs", top}});
  }
  return {{"content", content}};
}

// The completions API's logprobs: parallel lists of tokens, their logprobs, the alternatives and
// each token's offset in the text (counted from `offset`).
json completion_logprobs(const std::vector<AnswerLogprob>& tokens, size_t offset) {
  json out = {{"tokens", json::array()}, {"token_logprobs", json::array()}, {"top_logprobs", json::array()},
              {"text_offset", json::array()}};
  for (const AnswerLogprob& t : tokens) {
    out["tokens"].push_back(t.token);
    out["token_logprobs"].push_back(t.logprob);
    json top = json::object();
    for (const auto& [token, logprob] : t.top) top[token] = logprob;
    out["top_logprobs"].push_back(top);
    out["text_offset"].push_back(offset);
    offset += t.token.size();
  }
  return out;
}

json usage(int32_t prompt_tokens, int32_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens}, {"total_tokens", prompt_tokens + completion_tokens}};
}

json base(const AnswerHeader& h, bool chunk) {
  const bool chat = h.route == OpenAiRoute::ChatCompletions;
  return {{"id", h.id},
          {"object", chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
          {"created", h.created},
          {"model", h.model}};
}

}  // namespace

const char* openai_finish_reason(StopReason reason) { return reason == StopReason::Length ? "length" : "stop"; }

json answer_json(const AnswerHeader& header, const std::string& text, StopReason reason, int32_t prompt_tokens,
                 int32_t completion_tokens, const std::vector<AnswerLogprob>* logprobs) {
  const bool chat = header.route == OpenAiRoute::ChatCompletions;
  json choice = {{"index", 0}, {"finish_reason", openai_finish_reason(reason)}};
  if (chat) {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
    choice["logprobs"] = logprobs ? chat_logprobs(*logprobs) : json();
  } else {
    choice["text"] = text;
    choice["logprobs"] = logprobs ? completion_logprobs(*logprobs, 0) : json();
  }
  json out = base(header, false);
  out["choices"] = json::array({choice});
  out["usage"] = usage(prompt_tokens, completion_tokens);
  return out;
}

json chunk_json(const AnswerHeader& header, const std::optional<std::string>& role, const std::string& text,
                std::optional<StopReason> finish, const std::vector<AnswerLogprob>* logprobs, size_t text_offset) {
  const bool chat = header.route == OpenAiRoute::ChatCompletions;
  json choice = {{"index", 0}, {"finish_reason", finish ? json(openai_finish_reason(*finish)) : json()}};
  if (chat) {
    json delta = json::object();
    if (role) delta["role"] = *role;
    if (!text.empty() || (!role && !finish)) delta["content"] = text;
    choice["delta"] = delta;
    choice["logprobs"] = logprobs ? chat_logprobs(*logprobs) : json();
  } else {
    choice["text"] = text;
    choice["logprobs"] = logprobs ? completion_logprobs(*logprobs, text_offset) : json();
  }
  json out = base(header, true);
  out["choices"] = json::array({choice});
  return out;
}

json usage_chunk_json(const AnswerHeader& header, int32_t prompt_tokens, int32_t completion_tokens) {
  json out = base(header, true);
  out["choices"] = json::array();
  out["usage"] = usage(prompt_tokens, completion_tokens);
  return out;
}

}  // namespace inferscope
