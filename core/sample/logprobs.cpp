#include "core/sample/logprobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace inferscope {

double log_sum_exp(std::span<const float> logits) {
  const double m = *std::max_element(logits.begin(), logits.end());
  double s = 0;
  for (float v : logits) s += std::exp(static_cast<double>(v) - m);
  return m + std::log(s);
}

double log_probability(std::span<const float> logits, int32_t target) {
  if (target < 0 || static_cast<size_t>(target) >= logits.size()) {
    throw std::invalid_argument("token id " + std::to_string(target) + " is outside the logits (0.." +
                                std::to_string(logits.size() - 1) + ")");
  }
  return static_cast<double>(logits[static_cast<size_t>(target)]) - log_sum_exp(logits);
}

std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, int32_t k) {
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  const auto n = static_cast<ptrdiff_t>(std::clamp<size_t>(static_cast<size_t>(std::max(k, 0)), 0, ids.size()));
  std::partial_sort(ids.begin(), ids.begin() + n, ids.end(), [&](int32_t a, int32_t b) {
    return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)] ||
           (logits[static_cast<size_t>(a)] == logits[static_cast<size_t>(b)] && a < b);
  });
  const double norm = log_sum_exp(logits);
  std::vector<TokenLogprob> top;
  for (ptrdiff_t i = 0; i < n; ++i) top.push_back({ids[i], static_cast<double>(logits[static_cast<size_t>(ids[i])]) - norm});
  return top;
}

}  // namespace inferscope
