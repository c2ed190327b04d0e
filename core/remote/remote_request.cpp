#include "core/remote/remote_request.h"

namespace inferscope {
namespace {

using nlohmann::json;

// The fields every streamed request carries; parameters left at their "off" value are not sent, so
// the server's own defaults stay out of the way.
json common_body(const RemoteEndpoint& endpoint, ServerKind kind, const SamplingParams& sampling, int32_t max_tokens) {
  json body = {{"stream", true},
               {"stream_options", {{"include_usage", true}}},
               {"temperature", sampling.temperature},
               {"seed", sampling.seed}};
  if (max_tokens >= 0) body["max_tokens"] = max_tokens;
  if (!endpoint.model.empty()) body["model"] = endpoint.model;
  if (sampling.top_p < 1.0f) body["top_p"] = sampling.top_p;
  if (sampling.top_k > 0) body["top_k"] = sampling.top_k;
  if (sampling.min_p > 0.0f) body["min_p"] = sampling.min_p;
  if (sampling.repeat_penalty != 1.0f) {
    // llama.cpp's penalty over the last n tokens: llama-server's and our own names; vLLM's and SGLang's otherwise
    const bool llama_style = kind == ServerKind::LlamaCpp || kind == ServerKind::Inferscope;
    body[llama_style ? "repeat_penalty" : "repetition_penalty"] = sampling.repeat_penalty;
    if (llama_style) body["repeat_last_n"] = sampling.repeat_last_n;
  }
  if (sampling.ignore_eos) body["ignore_eos"] = true;
  return body;
}

}  // namespace

json chat_request_body(const RemoteEndpoint& endpoint, ServerKind kind, const std::vector<ChatMessage>& messages,
                       const SamplingParams& sampling, int32_t max_tokens) {
  json body = common_body(endpoint, kind, sampling, max_tokens);
  body["messages"] = json::array();
  for (const ChatMessage& m : messages) body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  return body;
}

json completion_request_body(const RemoteEndpoint& endpoint, ServerKind kind, json prompt, const SamplingParams& sampling,
                             int32_t max_tokens) {
  json body = common_body(endpoint, kind, sampling, max_tokens);
  body["prompt"] = std::move(prompt);
  return body;
}

}  // namespace inferscope
