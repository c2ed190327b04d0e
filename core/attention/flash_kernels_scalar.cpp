// Plain loops: the reference the AVX2 kernels are tested against, and the path without AVX2.
#include <cmath>

#include "core/attention/flash_kernels.h"
#include "kernels/cpu/cpu_features.h"

namespace inferscope {
namespace {

void scores_scalar(const float* q, const float* k, int32_t n, int32_t head_dim, float* s) {
  for (int32_t j = 0; j < n; ++j, k += head_dim) {
    float acc = 0.0f;
    for (int32_t d = 0; d < head_dim; ++d) acc += q[d] * k[d];
    s[j] = acc;
  }
}

void update_scalar(float* s, int32_t n, const float* v, int32_t head_dim, float& m, float& l, float* o) {
  // m_new = max(m_old, rowmax(S))
  float m_new = m;
  for (int32_t j = 0; j < n; ++j) m_new = std::fmax(m_new, s[j]);
  // P = exp(S - m_new);  l_new = exp(m_old - m_new) * l_old + rowsum(P)
  const float alpha = std::exp2(m - m_new);
  float rowsum = 0.0f;
  for (int32_t j = 0; j < n; ++j) {
    s[j] = std::exp2(s[j] - m_new);
    rowsum += s[j];
  }
  l = alpha * l + rowsum;
  m = m_new;
  // O_new = exp(m_old - m_new) * O_old + P·V
  for (int32_t d = 0; d < head_dim; ++d) o[d] *= alpha;
  for (int32_t j = 0; j < n; ++j, v += head_dim) {
    for (int32_t d = 0; d < head_dim; ++d) o[d] += s[j] * v[d];
  }
}

}  // namespace

const FlashRowKernels& flash_kernels_scalar() {
  static const FlashRowKernels kernels{scores_scalar, update_scalar};
  return kernels;
}

const FlashRowKernels& flash_kernels() {
  static const FlashRowKernels& kernels = use_avx2() ? flash_kernels_avx2() : flash_kernels_scalar();
  return kernels;
}

}  // namespace inferscope
