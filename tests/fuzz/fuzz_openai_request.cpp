// libFuzzer target for the OpenAI request reader (core/server/openai_request.h), which reads what any
// client sends to inferscope-cli serve. The input's first byte picks the route; the rest is the body.
// Every body is either read or refused with a 400 ApiError, never anything else; a body it reads
// holds sampling parameters the engine's sampler accepts, a chat's turns, and limits in range.
#include <cstdint>
#include <cstdlib>

#include "core/sample/sampler.h"
#include "core/server/openai_request.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace inferscope;
  if (size == 0) return 0;
  const OpenAiRoute route = data[0] % 2 == 0 ? OpenAiRoute::ChatCompletions : OpenAiRoute::Completions;
  try {
    const OpenAiRequest r = read_openai_request(route, fuzz::text_of(data + 1, size - 1));
    validate_sampling(r.engine.sampling);  // throws (and so aborts below) for a value the sampler refuses
    if (route == OpenAiRoute::ChatCompletions && r.engine.messages.empty()) std::abort();
    if (r.engine.max_tokens < 0 || r.top_logprobs > 20) std::abort();
  } catch (const ApiError& e) {
    if (e.status() != 400) std::abort();
  }
  return 0;
}
