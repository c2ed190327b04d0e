// Row-wise ops of the forward pass. Each reduction runs in one fixed order, so a row's result never
// depends on the batch it is in.
#include "kernels/cpu/ops.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/ops_kernels.h"
#include "kernels/cpu/matmul/vec_dot.h"

namespace inferscope {

void rmsnorm(float* out, const float* x, const float* weight, int64_t n, float eps) {
  double sum_sq = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(n) + eps));
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale * weight[i];
}

void rope(float* head, int64_t head_dim, int64_t rope_dim, int32_t pos, float freq_base, float freq_scale) {
  rope_heads(head, 1, head_dim, rope_dim, pos, freq_base, freq_scale);
}

void rope_heads(float* heads, int64_t n_heads, int64_t head_dim, int64_t rope_dim, int32_t pos, float freq_base,
                float freq_scale) {
  constexpr int64_t kMaxPairs = 512;  // the angles live on the stack (heads are 64..256 wide in practice)
  float cos_v[kMaxPairs], sin_v[kMaxPairs];
  if (rope_dim / 2 > kMaxPairs) throw std::invalid_argument("rope: rope_dim above 1024");
  rope_cos_sin(cos_v, sin_v, rope_dim, pos, freq_base, freq_scale);
  rope_apply(heads, n_heads, head_dim, rope_dim, cos_v, sin_v);
}

RopeYarn rope_yarn(int64_t rope_dim, float freq_base, float freq_scale, int64_t n_ctx_orig, float attn_factor,
                   float beta_fast, float beta_slow) {
  // the pair whose wavelength 2*pi*base^(2i/rope_dim) turns n_rot times over n_ctx_orig positions
  const auto pair_turning = [&](float n_rot) {
    return static_cast<float>(rope_dim) * std::log(static_cast<float>(n_ctx_orig) / (n_rot * 2.0f * std::numbers::pi_v<float>)) /
           (2.0f * std::log(freq_base));
  };
  RopeYarn y;
  y.corr_low = std::max(0.0f, std::floor(pair_turning(beta_fast)));
  y.corr_high = std::min(static_cast<float>(rope_dim - 1), std::ceil(pair_turning(beta_slow)));
  y.mscale = attn_factor * (freq_scale < 1.0f ? 1.0f + 0.1f * std::log(1.0f / freq_scale) : 1.0f);
  return y;
}

void rope_cos_sin(float* cos_out, float* sin_out, int64_t rope_dim, int32_t pos, float freq_base, float freq_scale,
                  const float* freq_factors, const RopeYarn* yarn) {
  // frequencies base^(-2i/rope_dim) by repeated multiplication in double (error ~1e-15, far below f32)
  const double step = std::pow(static_cast<double>(freq_base), -2.0 / static_cast<double>(rope_dim));
  double freq = 1.0;
  for (int64_t i = 0; i < rope_dim / 2; ++i, freq *= step) {
    const double factor = freq_factors != nullptr ? static_cast<double>(freq_factors[i]) : 1.0;
    double angle = static_cast<double>(pos) * static_cast<double>(freq_scale) * freq / factor;
    double mscale = 1.0;
    if (yarn != nullptr) {
      // the ramp: 1 (keep the original angle) below corr_low, 0 (interpolate) above corr_high
      const double span = std::max(0.001, static_cast<double>(yarn->corr_high) - yarn->corr_low);
      const double ramp = 1.0 - std::clamp((static_cast<double>(i) - yarn->corr_low) / span, 0.0, 1.0);
      const double mix = ramp * yarn->ext_factor;
      angle = angle * (1.0 - mix) + static_cast<double>(pos) * freq / factor * mix;
      mscale = yarn->mscale;
    }
    double s = 0.0, c = 0.0;
    ::sincos(angle, &s, &c);
    cos_out[i] = static_cast<float>(c * mscale);
    sin_out[i] = static_cast<float>(s * mscale);
  }
}

void rope_apply(float* heads, int64_t n_heads, int64_t head_dim, int64_t rope_dim, const float* cos_in,
                const float* sin_in, RopePairing pairing) {
  const int64_t n_pairs = (rope_dim < head_dim ? rope_dim : head_dim) / 2;
  // pair i is (first(i), first(i) + stride): (2i, 2i+1) or (i, i + n_pairs)
  const bool neox = pairing == RopePairing::Neox;
  const int64_t stride = neox ? n_pairs : 1;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* head = heads + h * head_dim;
    for (int64_t i = 0; i < n_pairs; ++i) {
      float* p0 = head + (neox ? i : 2 * i);
      const float x0 = p0[0], x1 = p0[stride];
      p0[0] = x0 * cos_in[i] - x1 * sin_in[i];
      p0[stride] = x0 * sin_in[i] + x1 * cos_in[i];
    }
  }
}

void softmax(float* x, int64_t n) {
  if (use_avx2()) {
    cpu::softmax_avx2(x, n);
  } else {
    cpu::softmax_scalar(x, n);
  }
}

void swiglu(float* gate, const float* up, int64_t n) {
  if (use_avx2()) {
    cpu::swiglu_avx2(gate, up, n);
  } else {
    cpu::swiglu_scalar(gate, up, n);
  }
}

void geglu(float* gate, const float* up, int64_t n) {
  if (use_avx2()) {
    cpu::geglu_avx2(gate, up, n);
  } else {
    cpu::geglu_scalar(gate, up, n);
  }
}

void add_inplace(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void scale_inplace(float* y, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] *= s;
}

float dot_f32(const float* a, const float* b, int64_t n) {
  // chosen once: attention calls this for every (query, key) pair
  constexpr ActivationPrecision kAct = ActivationPrecision::F32;
  static const cpu::VecDotFn dot =
      (use_avx2() ? cpu::avx2_kernel(DType::F32, kAct) : cpu::scalar_kernel(DType::F32, kAct))->dot;
  return dot(a, b, n);
}

namespace cpu {

void softmax_scalar(float* x, int64_t n) {
  if (n <= 0) return;
  float max = x[0];
  for (int64_t i = 1; i < n; ++i) max = std::fmax(max, x[i]);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void swiglu_scalar(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void geglu_scalar(float* gate, const float* up, int64_t n) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f, kCubic = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float x = gate[i];
    gate[i] = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + kCubic * x * x * x))) * up[i];
  }
}

}  // namespace cpu
}  // namespace inferscope
