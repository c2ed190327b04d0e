// What a workload is, in one paragraph a user reads before running it: how many requests arrive over
// how long, which prompts are text and which are synthetic (pseudo-random token ids, whose outputs
// are no answer to read), shared prefixes and the output lengths asked for.
#pragma once
#include <string>

#include "core/workload/workload.h"

namespace inferscope {

// True when some of the request's prompt ids are pseudo-random (prompt_tokens, or a shared prefix
// before its text): a model's continuation of them is not an answer to anything.
bool has_synthetic_prompt(const WorkloadRequest& request);

// "6 requests arriving over 0.20 s. Every prompt is text. 32–48 output tokens each (232 in all)."
// with the synthetic prompts and shared prefixes counted when there are any.
std::string describe_workload(const Workload& workload);

}  // namespace inferscope
