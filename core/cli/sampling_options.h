// Sampling options shared by generate and chat.
#pragma once
#include <vector>

#include "core/cli/args.h"
#include "core/sample/sampler.h"

namespace inferscope::cli {

// --temp, --top-k, --top-p, --min-p, --repeat-penalty, --seed
std::vector<OptionSpec> sampling_option_specs();
SamplingParams sampling_params(const Args& args);

}  // namespace inferscope::cli
