// Decoding OpenAI-compatible completion streams (vLLM, SGLang, llama-server) into typed events:
// each SSE data payload is a JSON chunk (chat.completion.chunk or text_completion) or "[DONE]".
// Pure: no clocks. A client stamps each returned event with its own receive time to measure TTFT
// (first ContentDelta) and inter-token latency (between ContentDeltas).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/engine/server_timings.h"
#include "core/remote/sse_stream.h"

namespace inferscope {

// Generated text: choices[i].delta.content (chat) or choices[i].text (text completion). Never empty:
// the empty role-only first chunk vLLM sends is not a token.
struct ContentDelta {
  int choice = 0;
  std::string text;
};

// Reasoning text (delta.reasoning_content, or delta.reasoning in newer vLLM), kept apart from content.
struct ReasoningDelta {
  int choice = 0;
  std::string text;
};

struct FinishReason {
  int choice = 0;
  std::string reason;  // "stop", "length", ...
};

// The `usage` object (vLLM sends it in a final chunk with "choices": [] when asked to).
struct UsageReport {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

// An error the server reported inside the stream (often after an HTTP 200).
struct ServerError {
  std::string message;
  std::string type;  // empty when the server gave none
  std::string code;  // as text ("400", "model_not_found"); empty when none
};

// Something the decoder could not accept: malformed JSON, a field of the wrong type, a cut stream.
struct ProtocolError {
  std::string message;
};

// data: [DONE], the end of the stream.
struct StreamDone {};

using ChatEvent =
    std::variant<ContentDelta, ReasoningDelta, FinishReason, UsageReport, ServerTimings, ServerError, ProtocolError, StreamDone>;

// One JSON payload as events, in the order: error, then per choice reasoning, content and finish
// reason, then usage and timings. Accepts streamed chunks and whole non-streamed response bodies
// (choices[i].message for chat, choices[i].text for text completion). Problems come back as a
// ProtocolError naming the field and quoting the payload (truncated).
std::vector<ChatEvent> decode_completion_payload(std::string_view payload);

// Bytes of a streamed response body in, events out.
class ChatStreamDecoder {
 public:
  ChatStreamDecoder();

  // Appends bytes as read from the socket; returns the events they complete.
  std::vector<ChatEvent> feed(std::string_view bytes);

  // End of the body: a ProtocolError when it stopped mid-event, or without [DONE] and without an
  // error the server reported; otherwise nothing.
  std::vector<ChatEvent> finish();

  bool done() const { return done_; }

 private:
  void decode_event(const SseEvent& event, std::vector<ChatEvent>& out);

  SseParser sse_;
  bool done_ = false;
  bool server_error_seen_ = false;
};

}  // namespace inferscope
