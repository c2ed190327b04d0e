// Comparing two forward passes' logits: the relative error of one position's row, and seeded random
// token ids to feed both.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "core/tokenizer/vocab.h"

namespace inferscope::test {

// max|got - want| / max|want| over one position's logits (NaN or inf in `got` never passes).
template <typename Want>
double relative_error(std::span<const float> got, const std::vector<Want>& want) {
  double max_diff = 0.0, max_ref = 0.0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    max_diff = std::max(max_diff, std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i])));
    max_ref = std::max(max_ref, std::abs(static_cast<double>(want[i])));
  }
  return max_diff / max_ref;
}

// n seeded random token ids in first .. vocab - 1 (the whole vocabulary by default).
inline std::vector<TokenId> random_tokens(int n, int32_t vocab, uint32_t seed, TokenId first = 0) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<TokenId> dist(first, vocab - 1);
  std::vector<TokenId> ids(static_cast<size_t>(n));
  for (TokenId& id : ids) id = dist(rng);
  return ids;
}

}  // namespace inferscope::test
