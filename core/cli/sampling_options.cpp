#include "core/cli/sampling_options.h"

#include <cstdint>

namespace inferscope::cli {

std::vector<OptionSpec> sampling_option_specs() {
  return {
      {"--temp", "", true, "temperature (default 0: greedy)"},
      {"--top-k", "", true, "keep the k most likely tokens (0: off)"},
      {"--top-p", "", true, "nucleus sampling threshold (1: off)"},
      {"--min-p", "", true, "drop tokens below min-p x the top probability (0: off)"},
      {"--repeat-penalty", "", true, "penalty for recently seen tokens (1: off)"},
      {"--seed", "", true, "random seed (same seed, same text)"},
  };
}

SamplingParams sampling_params(const Args& args) {
  SamplingParams p;
  p.temperature = static_cast<float>(args.real("--temp", 0.0, 0.0, 100.0));
  p.top_k = static_cast<int32_t>(args.integer("--top-k", 0, 0, 1 << 24));
  p.top_p = static_cast<float>(args.real("--top-p", 1.0, 0.0, 1.0));
  p.min_p = static_cast<float>(args.real("--min-p", 0.0, 0.0, 1.0));
  p.repeat_penalty = static_cast<float>(args.real("--repeat-penalty", 1.0, 0.0, 100.0));
  p.seed = static_cast<uint64_t>(args.integer("--seed", static_cast<int64_t>(p.seed), 0, INT64_MAX));
  return p;
}

}  // namespace inferscope::cli
