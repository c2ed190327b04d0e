// bench --spec-sweep: for k = 1..8 draft tokens and k = auto, what one speculative step costs against
// a plain decode step, how many drafts the target accepts on a prompt, and the speed-up that results,
// measured and as the cost model predicts it.
#pragma once
#include <string>
#include <vector>

#include "core/engine/engine_config.h"
#include "core/model/llama_model.h"
#include "core/sample/sampler.h"

namespace inferscope::cli {

// Generates n_gen tokens of `prompt` without speculation and with config.spec at each k (greedy, or
// the request sampling of `sampling`), the configurations taking turns each repetition; `only_k`:
// config.spec.k alone. Prints md, csv or json.
int spec_sweep(const LlamaModel& model, const EngineConfig& config, const std::vector<TokenId>& prompt, int64_t n_gen,
               const SamplingParams& sampling, int64_t reps, bool only_k, const std::string& output);

}  // namespace inferscope::cli
