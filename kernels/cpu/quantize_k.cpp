// The K-quant writers: a scale search per sub-block, then the sub-block scales rounded against one
// super-block scale, then every element rounded again with the scales the reader will see.
#include "kernels/cpu/quantize_k.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/cpu/quant_math.h"
#include "kernels/cpu/quantize.h"

namespace inferscope::cpu {
namespace {

constexpr int kAffineSubBlock = 32;  // Q4_K/Q5_K sub-block, the longest fit_scale_min takes
constexpr float kTinyGroup = 1e-15f;  // a sub-block this close to zero is stored as zeros (as ggml)

// q_i = round((x_i - offset) * iscale) within [0, nmax].
void round_affine(const float* x, int n, int nmax, float iscale, float offset, uint8_t* q) {
  for (int i = 0; i < n; ++i) q[i] = static_cast<uint8_t>(round_clamped((x[i] - offset) * iscale, 0, nmax));
}

float affine_error(const float* x, const float* w, const uint8_t* q, int n, float scale, float offset) {
  float error = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float diff = scale * q[i] + offset - x[i];
    error += w[i] * diff * diff;
  }
  return error;
}

// Fits the 8 sub-blocks of one Q4_K/Q5_K super-block: sets d, dmin and the 6-bit scales and mins,
// and q[i] = element i's quant in [0, nmax] under them.
void quant_affine_super_block(const float* x, int nmax, const ScaleGrid& grid, f16_bits& d_bits,
                              f16_bits& dmin_bits, uint8_t* scales, uint8_t* q) {
  constexpr int kSubBlocks = QK_K / kAffineSubBlock;
  AffineFit fits[kSubBlocks];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < kSubBlocks; ++j) {
    const float* xs = x + kAffineSubBlock * j;
    float w[kAffineSubBlock];
    k_error_weights(xs, kAffineSubBlock, w);
    fits[j] = fit_scale_min(xs, w, kAffineSubBlock, nmax, grid);
    max_scale = std::max(max_scale, fits[j].scale);
    max_min = std::max(max_min, fits[j].min);
  }
  // The largest scale and min map to 63; the 6-bit codes are rounded before d and dmin go to f16, as ggml.
  const float inv_scale = max_scale > 0.0f ? 63.0f / max_scale : 0.0f;
  const float inv_min = max_min > 0.0f ? 63.0f / max_min : 0.0f;
  d_bits = f32_to_fp16(max_scale / 63.0f);
  dmin_bits = f32_to_fp16(max_min / 63.0f);
  const float d = fp16_to_f32(d_bits), dmin = fp16_to_f32(dmin_bits);
  std::memset(scales, 0, K_SCALE_SIZE);
  for (int j = 0; j < kSubBlocks; ++j) {
    const auto sc = static_cast<uint8_t>(round_clamped(inv_scale * fits[j].scale, 0, 63));
    const auto mn = static_cast<uint8_t>(round_clamped(inv_min * fits[j].min, 0, 63));
    set_k_scale_min(j, sc, mn, scales);
    const float step = d * sc, shift = dmin * mn;
    // Divided by the step, not multiplied by its inverse, as ggml (the two round differently at ties);
    // a zero step leaves every element at -shift whatever its quant.
    for (int l = 0; l < kAffineSubBlock; ++l) {
      const float v = step != 0.0f ? (x[kAffineSubBlock * j + l] + shift) / step : 0.0f;
      q[kAffineSubBlock * j + l] = static_cast<uint8_t>(round_clamped(v, 0, nmax));
    }
  }
}

// Element 32*j + l's 4 low bits go to the low (even j) or high (odd j) nibble of qs[32*(j/2) + l].
void pack_k_nibbles(const uint8_t* q, uint8_t* qs) {
  std::memset(qs, 0, QK_K / 2);
  for (int i = 0; i < QK_K; ++i) {
    const int j = i / 32, l = i % 32;
    qs[32 * (j / 2) + l] |= static_cast<uint8_t>((q[i] & 0x0f) << (4 * (j % 2)));
  }
}

}  // namespace

void k_error_weights(const float* x, int n, float* w) {
  float sum_x2 = 0.0f;
  for (int i = 0; i < n; ++i) sum_x2 += x[i] * x[i];
  const float rms = std::sqrt(sum_x2 / static_cast<float>(n));
  for (int i = 0; i < n; ++i) w[i] = rms + std::fabs(x[i]);
}

AffineFit fit_scale_min(const float* x, const float* w, int n, int nmax, const ScaleGrid& grid) {
  float lo = 0.0f, hi = x[0], sum_w = 0.0f, sum_x = 0.0f;
  for (int i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    sum_w += w[i];
    sum_x += w[i] * x[i];
  }
  // Every element equals lo (<= 0): a zero scale and min -lo store it exactly.
  if (hi == lo) return {0.0f, -lo, 0.0f};
  uint8_t q[kAffineSubBlock];
  round_affine(x, n, nmax, static_cast<float>(nmax) / (hi - lo), lo, q);
  AffineFit best{(hi - lo) / static_cast<float>(nmax), -lo, 0.0f};
  best.error = affine_error(x, w, q, n, best.scale, lo);
  for (int c = 0; c < grid.count; ++c) {
    // Each candidate rounds from the best offset so far (as ggml): the search walks on from each better fit.
    const float offset = -best.min;
    const float candidate = static_cast<float>(nmax) + grid.first + grid.step * static_cast<float>(c);
    round_affine(x, n, nmax, candidate / (hi - offset), offset, q);
    // Weighted least squares of x ~ scale * q + offset for these quants.
    float sum_q = 0.0f, sum_q2 = 0.0f, sum_xq = 0.0f;
    for (int i = 0; i < n; ++i) {
      sum_q += w[i] * q[i];
      sum_q2 += w[i] * q[i] * q[i];
      sum_xq += w[i] * q[i] * x[i];
    }
    const float det = sum_w * sum_q2 - sum_q * sum_q;
    if (det <= 0.0f) continue;  // all quants equal: no line to fit
    float scale = (sum_w * sum_xq - sum_x * sum_q) / det;
    float fit_offset = (sum_q2 * sum_x - sum_q * sum_xq) / det;
    // The format subtracts a min >= 0, so a positive offset becomes 0 and the scale is refitted alone.
    if (fit_offset > 0.0f) {
      fit_offset = 0.0f;
      scale = sum_xq / sum_q2;
    }
    const float error = affine_error(x, w, q, n, scale, fit_offset);
    if (error < best.error) best = {scale, -fit_offset, error};
  }
  return best;
}

float fit_symmetric_scale(const float* x, int n, int nmax) {
  const float max = signed_absmax(x, n);
  if (std::fabs(max) < kTinyGroup) return 0.0f;
  // Rounds at inverse scale -(nmax + 0.1*c) / max; returns sum(w x q) and sum(w q^2), w = x^2.
  const auto sums_at = [&](int c, float& sum_xq, float& sum_q2) {
    const float iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(c)) / max;
    sum_xq = sum_q2 = 0.0f;
    for (int i = 0; i < n; ++i) {
      const auto q = static_cast<float>(round_clamped(iscale * x[i], -nmax, nmax - 1));
      const float w = x[i] * x[i];
      sum_xq += w * x[i] * q;
      sum_q2 += w * q * q;
    }
  };
  // The best scale for quants q leaves sum(w x^2) - sum(w x q)^2 / sum(w q^2): the candidate with the
  // largest sum(w x q)^2 / sum(w q^2) wins. The largest element lands within 1 of -nmax, so sum_q2 > 0.
  float sum_xq = 0.0f, sum_q2 = 0.0f;
  sums_at(0, sum_xq, sum_q2);
  float scale = sum_xq / sum_q2, gain = scale * sum_xq;
  for (int c = -9; c <= 9; ++c) {
    if (c == 0) continue;
    sums_at(c, sum_xq, sum_q2);
    if (sum_xq * sum_xq > gain * sum_q2) {
      scale = sum_xq / sum_q2;
      gain = scale * sum_xq;
    }
  }
  return scale;
}

void quant_q4_k(const float* x, BlockQ4_K* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += QK_K) {
    uint8_t q[QK_K];
    quant_affine_super_block(x, 15, kQ4KGrid, b[i].d, b[i].dmin, b[i].scales, q);
    pack_k_nibbles(q, b[i].qs);
  }
}

void quant_q5_k(const float* x, BlockQ5_K* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += QK_K) {
    uint8_t q[QK_K];
    quant_affine_super_block(x, 31, kQ5KGrid, b[i].d, b[i].dmin, b[i].scales, q);
    pack_k_nibbles(q, b[i].qs);
    // The fifth bit of element 32*j + l is bit j of qh[l].
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    for (int e = 0; e < QK_K; ++e) b[i].qh[e % 32] |= static_cast<uint8_t>((q[e] >> 4) << (e / 32));
  }
}

void quant_q6_k(const float* x, BlockQ6_K* b, int64_t nb) {
  constexpr int kSubBlocks = QK_K / 16;
  for (int64_t i = 0; i < nb; ++i, x += QK_K) {
    std::memset(&b[i], 0, sizeof(b[i]));
    float scales[kSubBlocks];
    float max_scale = 0.0f;  // signed, of largest magnitude
    for (int s = 0; s < kSubBlocks; ++s) {
      scales[s] = fit_symmetric_scale(x + 16 * s, 16, 32);
      if (std::fabs(scales[s]) > std::fabs(max_scale)) max_scale = scales[s];
    }
    if (std::fabs(max_scale) < kTinyGroup) continue;  // all zeros: d = 0
    // The largest scale maps to the int8 -128; each element is then rounded against d * its scale.
    const float iscale = -128.0f / max_scale;
    b[i].d = f32_to_fp16(1.0f / iscale);
    const float d = fp16_to_f32(b[i].d);
    for (int s = 0; s < kSubBlocks; ++s) {
      b[i].scales[s] = static_cast<int8_t>(round_clamped(iscale * scales[s], -128, 127));
    }
    for (int e = 0; e < QK_K; ++e) {
      const float step = d * b[i].scales[e / 16];
      const int q = (step != 0.0f ? round_clamped(x[e] / step, -32, 31) : 0) + 32;
      // e = 128*h + 32*k + l; see BlockQ6_K for where the 4 low and 2 high bits of q go.
      const int h = e / 128, k = (e / 32) % 4, l = e % 32;
      b[i].ql[64 * h + 32 * (k % 2) + l] |= static_cast<uint8_t>((q & 0x0f) << (k < 2 ? 0 : 4));
      b[i].qh[32 * h + l] |= static_cast<uint8_t>((q >> 4) << (2 * k));
    }
  }
}

}  // namespace inferscope::cpu
