// Per-element maths of the CUDA row ops (RMSNorm, RoPE, SwiGLU, argmax), shared by the kernels and the
// CPU tests that pin them to kernels/cpu/ops.cpp and core/sample. Written as the CPU writes them, and
// the .cu files are compiled with --fmad=false, so the roundings are the CPU's.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/cpu/ops.h"
#include "kernels/cuda/host_device.h"

namespace inferscope::gpu {

// RMSNorm's row scale 1 / sqrt(mean(x^2) + eps) from the row's sum of squares (summed in double).
INFERSCOPE_HD inline float rmsnorm_scale(double sum_sq, int64_t n, float eps) {
  return static_cast<float>(1.0 / ::sqrt(sum_sq / static_cast<double>(n) + eps));
}

// One normalized element: x * scale * weight, in that order.
INFERSCOPE_HD inline float rmsnorm_value(float x, float scale, float weight) { return x * scale * weight; }

// The ratio between consecutive RoPE pair frequencies, base^(-2/rope_dim) in double (computed on the
// host, as the CPU does, and handed to the kernels: the GPU's pow may round differently).
inline double rope_freq_step(float freq_base, int64_t rope_dim) {
  return std::pow(static_cast<double>(freq_base), -2.0 / static_cast<double>(rope_dim));
}

// Pair i's frequency base^(-2i/rope_dim): `step` multiplied i times onto 1, as rope_cos_sin's loop does.
INFERSCOPE_HD inline double rope_pair_freq(int64_t i, double step) {
  double freq = 1.0;
  for (int64_t k = 0; k < i; ++k) freq *= step;
  return freq;
}

// cos and sin of pair i's angle at position pos (rope_cos_sin's loop body): `factor` divides the
// frequency (1 without frequency factors); `yarn` (or null) blends in YaRN's original angle and mscale.
INFERSCOPE_HD inline void rope_pair_cos_sin(int64_t i, double freq, int32_t pos, float freq_scale, double factor,
                                            const RopeYarn* yarn, float& cos_out, float& sin_out) {
  double angle = static_cast<double>(pos) * static_cast<double>(freq_scale) * freq / factor;
  double mscale = 1.0;
  if (yarn != nullptr) {
    // the ramp: 1 (keep the original angle) below corr_low, 0 (interpolate) above corr_high
    const double gap = static_cast<double>(yarn->corr_high) - yarn->corr_low;
    const double span = gap > 0.001 ? gap : 0.001;
    const double t = (static_cast<double>(i) - yarn->corr_low) / span;
    const double ramp = 1.0 - (t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t));
    const double mix = ramp * yarn->ext_factor;
    angle = angle * (1.0 - mix) + static_cast<double>(pos) * freq / factor * mix;
    mscale = yarn->mscale;
  }
  double s = 0.0, c = 0.0;
  ::sincos(angle, &s, &c);
  cos_out = static_cast<float>(c * mscale);
  sin_out = static_cast<float>(s * mscale);
}

// Rotates one RoPE pair (x0, x1) by the angle whose cos and sin are given.
INFERSCOPE_HD inline void rope_rotate(float& x0, float& x1, float c, float s) {
  const float a = x0, b = x1;
  x0 = a * c - b * s;
  x1 = a * s + b * c;
}

// Where pair i of a head starts, and how far its partner is: (2i, 2i+1) or NeoX's (i, i + n_pairs).
INFERSCOPE_HD inline int64_t rope_pair_first(int64_t i, bool neox) { return neox ? i : 2 * i; }
INFERSCOPE_HD inline int64_t rope_pair_stride(int64_t n_pairs, bool neox) { return neox ? n_pairs : 1; }

// silu(gate) * up.
INFERSCOPE_HD inline float swiglu_value(float gate, float up) { return gate / (1.0f + ::expf(-gate)) * up; }

// Whether candidate (va, ia) beats (vb, ib) for argmax as core/sample's argmax scans: a number beats
// NaN, a larger value wins, equal values go to the lower index, and among NaNs the higher index wins
// (an all-NaN row gives its last index). A total order, so any reduction tree gives the scan's answer.
INFERSCOPE_HD inline bool argmax_prefers(float va, int64_t ia, float vb, int64_t ib) {
  const bool a_nan = va != va, b_nan = vb != vb;
  if (a_nan != b_nan) return b_nan;
  if (a_nan) return ia > ib;
  if (va != vb) return va > vb;
  return ia < ib;
}

}  // namespace inferscope::gpu
