// Internal to kernels/cpu: small numeric helpers the quantizers (quantize.cpp, quantize_k.cpp) share.
#pragma once
#include <cmath>

namespace inferscope::cpu {

// The element of largest magnitude, with its sign (the first one on ties).
inline float signed_absmax(const float* x, int n) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < n; ++j) {
    if (std::fabs(x[j]) > amax) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  return max;
}

// v rounded to the nearest integer (half to even) within [lo, hi]; clamping first keeps huge v defined.
inline int round_clamped(float v, int lo, int hi) {
  return static_cast<int>(std::nearbyint(std::fmax(static_cast<float>(lo), std::fmin(static_cast<float>(hi), v))));
}

}  // namespace inferscope::cpu
