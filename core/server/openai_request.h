// The OpenAI API's requests as the engine's: a /v1/chat/completions or /v1/completions body read into
// an EngineRequest (chat turns, or a prompt as text or token ids; sampling, stop strings, the token
// limit) and how the answer goes back (streamed or whole, usage, logprobs). What the engine does not
// do (n > 1, tools, response formats, OpenAI's frequency and presence penalties) is refused by name,
// and so is a field of the wrong type or out of range; fields it does not know are ignored, as
// OpenAI's are. Pure: no model, no engine.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "core/engine/engine_request.h"
#include "core/server/api_error.h"

namespace inferscope {

// OpenAI's limit on top_logprobs (and on the legacy logprobs count).
inline constexpr int32_t kMaxTopLogprobs = 20;

enum class OpenAiRoute { ChatCompletions, Completions };

struct OpenAiRequest {
  OpenAiRoute route = OpenAiRoute::ChatCompletions;
  EngineRequest engine;        // messages, or prompt / prompt_tokens; sampling, stop, max_tokens
  std::string model;           // as the client named it ("" when it named none)
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with the usage
  int32_t top_logprobs = -1;   // -1: no logprobs; else the chosen token's and this many alternatives
};

// Throws ApiError (400) naming the field that is malformed, of the wrong type, out of range or not
// supported.
OpenAiRequest read_openai_request(OpenAiRoute route, std::string_view body);

// The most characters of a User-Agent's product a client label keeps.
inline constexpr size_t kMaxClientProduct = 32;

// Who sent a request, as EngineRequest::client: the User-Agent's first product ("curl/8.5.0",
// "OpenAI/Python"; bytes outside printable ASCII as '?', cut at kMaxClientProduct with an ellipsis) "at" the peer's
// address, or the address alone without a User-Agent.
std::string client_label(std::string_view user_agent, std::string_view address);

}  // namespace inferscope
