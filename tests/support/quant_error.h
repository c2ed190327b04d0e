// Measuring a quantizer: seeded gaussian rows shaped like weights, and the RMSE of a round trip.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace inferscope::test {

// n values of N(0, sigma); with outlier_every > 0, every outlier_every-th value on average is 10x larger
// (as the few large weights of real tensors).
inline std::vector<float> gaussian_row(int64_t n, uint32_t seed, float sigma = 1.0f, int outlier_every = 0) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, sigma);
  std::uniform_int_distribution<int> pick(0, outlier_every > 0 ? outlier_every - 1 : 0);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = normal(rng) * (outlier_every > 0 && pick(rng) == 0 ? 10.0f : 1.0f);
  return x;
}

// sqrt(mean((x - y)^2)).
inline double rmse(std::span<const float> x, std::span<const float> y) {
  double sum = 0.0;
  for (size_t i = 0; i < x.size(); ++i) sum += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
  return std::sqrt(sum / static_cast<double>(x.size()));
}

}  // namespace inferscope::test
