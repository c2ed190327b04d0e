// The OpenAI API's answers, built from what the engine produced: a whole chat.completion or
// text_completion object, or the chunks of its stream (the role first, content deltas, the finish
// reason, the usage when asked). Pure: the caller brings the text, token counts and logprobs.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/common/request_id.h"
#include "core/server/openai_request.h"

namespace inferscope {

struct AnswerLogprob {
  std::string token;    // its text (may be part of a UTF-8 character)
  double logprob = 0;   // log p under the model's raw logits
  std::vector<std::pair<std::string, double>> top;  // the most likely tokens at that position, best first
};

// What every object of one answer shares.
struct AnswerHeader {
  OpenAiRoute route = OpenAiRoute::ChatCompletions;
  std::string id;     // "chatcmpl-…" or "cmpl-…"
  int64_t created = 0;  // Unix seconds
  std::string model;
};

// "stop" for the end of generation or a stop string, "length" for the token limit or the context.
const char* openai_finish_reason(StopReason reason);

// The whole answer: choices[0] with the message (chat) or text (completions), its finish reason and,
// when asked, logprobs; usage.
nlohmann::json answer_json(const AnswerHeader& header, const std::string& text, StopReason reason, int32_t prompt_tokens,
                           int32_t completion_tokens, const std::vector<AnswerLogprob>* logprobs);

// One chunk of a streamed answer: `role` (chat's first chunk), a content delta with its tokens'
// logprobs (the completions API counts their text offsets from `text_offset`, the bytes streamed
// before), or the finish reason (with an empty delta).
nlohmann::json chunk_json(const AnswerHeader& header, const std::optional<std::string>& role, const std::string& text,
                          std::optional<StopReason> finish, const std::vector<AnswerLogprob>* logprobs, size_t text_offset);

// The stream's usage chunk (stream_options.include_usage): no choices, the usage.
nlohmann::json usage_chunk_json(const AnswerHeader& header, int32_t prompt_tokens, int32_t completion_tokens);

}  // namespace inferscope
