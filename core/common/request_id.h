// What identifies a request and why it ended, shared by the scheduler, the proposers, the engine and
// the front ends.
#pragma once
#include <cstdint>

namespace inferscope {

using RequestId = int32_t;  // also the request's sequence id in the KV cache

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

}  // namespace inferscope
