// One chat session as the workbench keeps it: its turns, its own sampling parameters and system
// prompt, and a timeline of every reply's measurements. Plain data (no widgets), saved as JSON.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/sample/sampler.h"
#include "core/tokenizer/chat_template.h"
#include "gui/chat/token_trace.h"

namespace inferscope::gui {

// What one reply measured (also one point of the session's timeline).
struct ReplyStats {
  int64_t time_unix_ms = 0;         // when the reply finished
  int32_t prompt_tokens = 0;        // the rendered conversation the reply continued
  int32_t tokens = 0;               // generated tokens
  double ttft_s = -1;               // time to first token (-1: none came)
  double tokens_per_second = 0;     // decode rate: tokens after the first / time since the first
  double seconds = 0;               // submit to finish
  std::string finish_reason;        // "stop" | "length" | "abort" | "error"
  std::string engine;               // the engine configuration it ran on (one line)
};

struct SessionMessage {
  std::string role;     // "user" | "assistant"
  std::string content;
  ReplyStats stats;     // assistant replies only
  std::vector<TracedToken> tokens;  // assistant replies: how each token came about (the per-token view)
  std::string reasoning;  // assistant replies from a server that streams its reasoning apart ("" else)
  // Assistant replies: said above the reply, how the turn was sent: what the context policy left out,
  // or that a greedy regeneration repeats the reply ("" else).
  std::string note;
};

struct ChatSession {
  std::string id;                  // file name stem, unique
  std::string name;
  int64_t created_unix_ms = 0;
  std::string system_prompt;       // "" = the chat template's default
  SamplingParams sampling;
  int32_t max_tokens = 256;
  std::vector<SessionMessage> messages;
  std::vector<ReplyStats> timeline;  // every reply ever made here, regenerated ones included

  // The turns the engine sees: the system prompt (when set), then every message.
  std::vector<ChatMessage> chat_messages() const;
};

nlohmann::json session_to_json(const ChatSession& session);
// Throws std::runtime_error naming `where` and the bad field.
ChatSession session_from_json(const nlohmann::json& j, const std::string& where);
// A session file's text; also throws std::runtime_error "WHERE: not valid JSON: ...".
ChatSession session_from_text(std::string_view text, const std::string& where);

}  // namespace inferscope::gui
