// What a caller hands the Engine, and what comes back through its callbacks.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/sample/sampler.h"
#include "core/sched/request.h"
#include "core/engine/server_timings.h"
#include "core/executor/step_executor.h"
#include "core/tokenizer/chat_template.h"

namespace inferscope {

// The prompt is `messages` (rendered with the model's chat template) when given, else
// `prompt_tokens` when given, else `prompt` as plain text ("" = BOS alone).
struct EngineRequest {
  std::vector<ChatMessage> messages;
  std::vector<TokenId> prompt_tokens;
  std::string prompt;
  SamplingParams sampling;
  int32_t max_tokens = 0;          // 0 = as many as the context (or the KV limit) allows
  // A max_tokens beyond the room the context (or the KV limit) leaves: true stops where it ends
  // (StopReason::Length), false refuses the request.
  bool up_to_context = false;
  std::vector<std::string> stop;   // stop strings: generation ends before the first one (not shown)
  LogitsOutput logits = LogitsOutput::None;  // raw logits to hand to on_logits (logprobs, perplexity)
  int32_t logits_from = 0;         // with LogitsOutput::All, the first position computed and handed out
  bool speculate = true;           // drafts tokens when the engine speculates (never with LogitsOutput::All)
  // Who asked, for the timeline and the block view: an HTTP client ("curl/8.5.0 at 127.0.0.1"); ""
  // for the front end's own requests.
  std::string client;
};

struct TokenTiming {
  double time_s = 0;          // seconds since the engine started
  double since_arrival_s = 0; // since submit()
  double inter_token_s = 0;   // since this request's previous token (its first: since submit())
};

// The token of an on_token call that carries a remote server's streamed chunk: text of one or more
// tokens whose ids the server does not send.
inline constexpr TokenId kRemoteChunk = -2;

// Called on the engine thread; they may call submit() or cancel() but must not block for long.
struct EngineCallbacks {
  // One output token and the text it completes (whole UTF-8 characters only; may be empty while a
  // character or a possible stop string is incomplete). token -1: text held back until the end;
  // kRemoteChunk: a remote server's chunk.
  std::function<void(RequestId, std::string_view piece, TokenId token, const TokenTiming&)> on_token;
  // Exactly once per submitted request, last.
  std::function<void(RequestId, StopReason reason)> on_finished;
  // A remote server's reasoning text (reasoning_content / reasoning deltas), apart from the reply.
  std::function<void(RequestId, std::string_view piece)> on_reasoning;
  // A remote server's token counts for the request (its usage report), before on_finished.
  std::function<void(RequestId, int32_t prompt_tokens, int32_t generation_tokens)> on_usage;
  // A remote server's own timing of the request (llama-server's timings), before on_finished.
  std::function<void(RequestId, const ServerTimings& timings)> on_server_timings;
  // Before on_finished(Failed): what went wrong.
  std::function<void(RequestId, const std::string& message)> on_error;
  // The raw logits a request asked for (EngineRequest::logits), row `position` of its sequence.
  LogitsFn on_logits;
  // A speculative step of the request was verified: how each of the tokens about to stream came
  // about (accepted draft, correction, bonus) with p(x) and q(x), and the draft refused, if any.
  // Called before those tokens' on_token calls (a stop string may cut them short).
  std::function<void(RequestId, const Verification& verification)> on_verify;
  // A set_config() was applied (or rejected): what changed and what it did to running requests.
  std::function<void(bool applied, const std::string& message)> on_config;
};

}  // namespace inferscope
