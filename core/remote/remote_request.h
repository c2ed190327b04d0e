// The JSON bodies of streamed requests to an OpenAI-compatible server: chat completions for chat
// sessions, text completions of token ids for serving workloads. Sampling parameters map to the field
// names each server reads (llama-server's repeat_penalty, vLLM's and SGLang's repetition_penalty).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/remote/remote_endpoint.h"
#include "core/remote/server_probe.h"
#include "core/sample/sampler.h"
#include "core/tokenizer/chat_template.h"

namespace inferscope {

// POST /v1/chat/completions, streamed with the usage chunk asked for; max_tokens < 0 leaves the length
// to the server (until end of generation or its context).
nlohmann::json chat_request_body(const RemoteEndpoint& endpoint, ServerKind kind, const std::vector<ChatMessage>& messages,
                                 const SamplingParams& sampling, int32_t max_tokens);

// POST /v1/completions, streamed; `prompt` is a string or an array of token ids. ignore_eos (from
// sampling) keeps it going to max_tokens, as benchmark clients ask.
nlohmann::json completion_request_body(const RemoteEndpoint& endpoint, ServerKind kind, nlohmann::json prompt,
                                       const SamplingParams& sampling, int32_t max_tokens);

}  // namespace inferscope
