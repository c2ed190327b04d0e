// The per-element arithmetic of online softmax, shared by the CUDA attention kernels and the CPU
// tests that check it (host and device run the same code). Scores are in the log2 domain (the
// caller scales q by log2(e)/sqrt(d)), so a weight is 2^(s - m) = e^(...).
//
// A row's state is its running max m and running sum l of weights 2^(s - m); its accumulator O (the
// weighted sum of value rows, head_dim elements) is held by the caller, which applies the factors
// returned here element by element. An empty state (no key seen) is m = -inf, l = 0, O = 0.
#pragma once
#include <cmath>

#include "kernels/cuda/host_device.h"

namespace inferscope::gpu {

struct OnlineSoftmax {
  float m = -INFINITY;
  float l = 0.0f;
};

// Raises the running max to cover new scores whose max is `new_max` (a tile's, or one score) and
// rescales l; returns the factor O must be multiplied by: exactly 1 when the max does not grow
// (also when every new score is masked, new_max = -inf).
INFERSCOPE_HD inline float online_softmax_rescale(OnlineSoftmax& s, float new_max) {
  if (!(new_max > s.m)) return 1.0f;
  // an empty state has l = 0 and O = 0: exp2(-inf) = 0 rescales them to 0, as it should
  const float alpha = exp2f(s.m - new_max);
  s.m = new_max;
  s.l *= alpha;
  return alpha;
}

// The weight 2^(score - m) of a score already covered by the running max; 0 for a masked score (-inf).
INFERSCOPE_HD inline float online_softmax_weight(const OnlineSoftmax& s, float score) {
  return score == -INFINITY ? 0.0f : exp2f(score - s.m);
}

// Factors of one score arriving alone: O = alpha * O + p * v.
struct ScoreStep {
  float alpha, p;
};

INFERSCOPE_HD inline ScoreStep online_softmax_add(OnlineSoftmax& s, float score) {
  const float alpha = online_softmax_rescale(s, score);
  const float p = online_softmax_weight(s, score);
  s.l += p;
  return {alpha, p};
}

// Factors of merging state b (accumulator O_b) into state a (O_a): O_a = a * O_a + b * O_b.
struct MergeFactors {
  float a, b;
};

// Whether a state has seen no key: m = -inf and l = 0. A split of NaN scores also keeps m = -inf (the
// max skips NaN) but its l is NaN: it is not empty, and its NaN reaches the row.
INFERSCOPE_HD inline bool online_softmax_empty(const OnlineSoftmax& s) { return s.m == -INFINITY && s.l == 0.0f; }

// Merges b into a, exactly: the result is the state of having seen a's scores and b's. Merging an
// empty state on either side is the identity bit for bit (factors 1 and 0), so splits that hold no
// visible key change nothing.
INFERSCOPE_HD inline MergeFactors online_softmax_merge(OnlineSoftmax& a, const OnlineSoftmax& b) {
  if (online_softmax_empty(b)) return {1.0f, 0.0f};
  if (online_softmax_empty(a)) {
    a = b;
    return {0.0f, 1.0f};
  }
  // m = max(m_a, m_b); l = 2^(m_a - m) l_a + 2^(m_b - m) l_b; O likewise
  const float m = fmaxf(a.m, b.m);
  const float fa = exp2f(a.m - m), fb = exp2f(b.m - m);
  a.l = fa * a.l + fb * b.l;
  a.m = m;
  return {fa, fb};
}

}  // namespace inferscope::gpu
