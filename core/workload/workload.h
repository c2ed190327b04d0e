// Serving workloads for serve-sim: a JSON file of requests (arrival time, prompt, output length),
// or a generated one, turned into token ids.
//
//   {"description": "three kinds of request",
//    "requests": [{"arrival_s": 0.0, "prompt_tokens": 500, "output_tokens": 300},
//                {"arrival_s": 0.5, "prompt": "Tell me a story", "output_tokens": 64},
//                {"prompt_tokens": 900, "shared_prefix_tokens": 800, "output_tokens": 32}]}
//
// prompt_tokens asks for that many deterministic pseudo-random token ids; "prompt" is tokenized
// instead. shared_prefix_tokens N: the prompt starts with the same N ids as every other request
// that says so (a common system prompt), followed by its own ids or its tokenized text.
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/sched/request.h"

namespace inferscope {

// A malformed workload; the message names the file, the request index and the field.
class WorkloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct WorkloadRequest {
  double arrival_s = 0;
  int32_t prompt_tokens = 0;  // pseudo-random ids after the shared prefix (0 when `prompt` is given)
  std::string prompt;         // text to tokenize instead of pseudo-random ids
  int32_t output_tokens = 0;
  int32_t shared_prefix_tokens = 0;
};

struct Workload {
  std::string description;  // the file's optional "description": what the workload is for
  std::vector<WorkloadRequest> requests;
};

struct LengthRange {
  int32_t min = 0, max = 0;  // inclusive
};

// `source` names the input in error messages (the file path).
Workload parse_workload(const nlohmann::json& root, const std::string& source);
// A workload file's text; throws WorkloadError when it is not JSON or is malformed.
Workload parse_workload_text(std::string_view text, const std::string& source);
// Reads and parses a workload file; throws WorkloadError when it cannot be read or is malformed.
Workload load_workload(const std::string& path);
// n requests arriving together at 0 s, prompt and output lengths uniform in their ranges.
Workload generate_workload(int32_t n, LengthRange prompt, LengthRange output, uint64_t seed);

using Encoder = std::function<std::vector<TokenId>(std::string_view text, bool add_bos)>;
// The requests with their prompt ids, sorted by arrival (ties keep file order); request i of the
// workload gets id i. Pseudo-random ids are uniform over the vocabulary and depend only on the seed
// and the request index.
std::vector<Request> materialize_workload(const Workload& workload, const Encoder& encode, int32_t vocab_size,
                                          uint64_t seed);

}  // namespace inferscope
