// One request as the scheduler tracks it: its tokens so far and how far it has come.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/tokenizer/vocab.h"

namespace inferscope {

using RequestId = int32_t;  // also the request's sequence id in the KV cache

enum class RequestState { Waiting, Running, Finished, Refused };
// output_tokens reached, an end-of-generation token, a stop string, cancelled, or a failed step.
enum class StopReason { Length, EndOfGeneration, StopString, Aborted, Failed };

// vLLM's finish reasons: "stop" (end of generation or a stop string), "length", "abort", "error".
inline const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::Length: return "length";
    case StopReason::EndOfGeneration:
    case StopReason::StopString: return "stop";
    case StopReason::Aborted: return "abort";
    case StopReason::Failed: return "error";
  }
  return "unknown";
}

struct Request {
  RequestId id = 0;
  double arrival_s = 0;            // seconds after the start of the run
  std::vector<TokenId> tokens;     // the prompt, then every generated token
  int32_t prompt_tokens = 0;
  int32_t max_output_tokens = 0;   // at least 1
  RequestState state = RequestState::Waiting;
  StopReason stop = StopReason::Length;
  int32_t num_preemptions = 0;
  int32_t num_computed = 0;        // leading tokens whose K/V the cache holds (chunked prefill progress)
  std::string refusal;             // why it was refused (state Refused)
  bool speculate = true;           // drafts tokens when the engine speculates
  int32_t max_drafts = INT32_MAX;  // the most drafts its next decode scores (the engine's choice each step)

  int32_t output_tokens() const { return static_cast<int32_t>(tokens.size()) - prompt_tokens; }
  // KV slots the request holds at its longest: the last sampled token is never fed back.
  int32_t max_kv_tokens() const { return prompt_tokens + max_output_tokens - 1; }
};

}  // namespace inferscope
