// What the benches feed the model: random token ids below its vocabulary, as llama-bench does (a
// step's cost does not depend on which tokens it computes).
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "core/model/llama_model.h"

namespace inferscope::cli {

inline std::vector<TokenId> random_tokens(const LlamaModel& model, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<TokenId> ids(static_cast<size_t>(n));
  for (TokenId& id : ids) id = static_cast<TokenId>(rng() % static_cast<uint64_t>(model.config().vocab_size));
  return ids;
}

}  // namespace inferscope::cli
