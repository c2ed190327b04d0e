// One request as the scheduler tracks it: its tokens so far and how far it has come.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/common/request_id.h"
#include "core/tokenizer/vocab.h"

namespace inferscope {

enum class RequestState { Waiting, Running, Finished, Refused };

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
  std::string client;              // who asked (EngineRequest::client), for the block table's snapshot
  int32_t max_drafts = INT32_MAX;  // the most drafts its next decode scores (the engine's choice each step)

  int32_t output_tokens() const { return static_cast<int32_t>(tokens.size()) - prompt_tokens; }
  // KV slots the request holds at its longest: the last sampled token is never fed back.
  int32_t max_kv_tokens() const { return prompt_tokens + max_output_tokens - 1; }
};

}  // namespace inferscope
