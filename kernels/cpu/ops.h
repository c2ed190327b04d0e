// Element-wise and row-wise ops of the forward pass (f32 activations).
#pragma once
#include <cstdint>

namespace inferscope {

// out = x / sqrt(mean(x^2) + eps) * weight, for one row of n (out may alias x).
void rmsnorm(float* out, const float* x, const float* weight, int64_t n, float eps);

// Rotary embedding in place on one head vector of head_dim floats at position pos, rotating
// adjacent pairs (2i, 2i+1) for 2i < rope_dim with angle pos * freq_scale * base^(-2i/rope_dim)
// (llama.cpp's "normal" rope, which GGUF llama files are written for).
void rope(float* head, int64_t head_dim, int64_t rope_dim, int32_t pos, float freq_base, float freq_scale);

// rope() on n_heads consecutive head vectors (stride head_dim) of one token, computing each angle's
// sin/cos once for all of them; bit-identical to calling rope() per head.
void rope_heads(float* heads, int64_t n_heads, int64_t head_dim, int64_t rope_dim, int32_t pos, float freq_base,
                float freq_scale);

// Which dimensions RoPE rotates together: adjacent pairs (2i, 2i+1), as llama files are written,
// or the halves' pairs (i, i + rope_dim/2) (GPT-NeoX's layout: Qwen, Phi-3, Gemma files).
enum class RopePairing { Adjacent, Neox };

// YaRN context extension (rope.scaling.type "yarn"): pair i's angle is the interpolated one (times
// freq_scale) blended towards the original by ramp(i) * ext_factor, where ramp(i) falls from 1 at pair
// corr_low to 0 at corr_high; cos and sin are multiplied by mscale (which scales attention logits by
// mscale^2).
struct RopeYarn {
  float corr_low = 0, corr_high = 0;
  float ext_factor = 1;
  float mscale = 1;
};

// YaRN's parameters as llama.cpp derives them for a model trained on n_ctx_orig positions and
// stretched by 1 / freq_scale: the pairs whose wavelength spans between beta_fast and beta_slow
// rotations over n_ctx_orig positions form the ramp; mscale = attn_factor * (1 + 0.1 ln(1/freq_scale))
// (attn_factor alone when not stretched).
RopeYarn rope_yarn(int64_t rope_dim, float freq_base, float freq_scale, int64_t n_ctx_orig, float attn_factor = 1.0f,
                   float beta_fast = 32.0f, float beta_slow = 1.0f);

// The two halves of rope_heads(), so that a caller can compute a position's rope_dim/2 cos and sin
// values once and apply them to every layer's q and k: bit-identical to rope_heads().
// `freq_factors` (rope_dim/2 values, or null): pair i's frequency is divided by freq_factors[i]
// (Llama 3.1's rope_freqs.weight). `yarn` (or null): YaRN scaling as above.
void rope_cos_sin(float* cos_out, float* sin_out, int64_t rope_dim, int32_t pos, float freq_base, float freq_scale,
                  const float* freq_factors = nullptr, const RopeYarn* yarn = nullptr);
void rope_apply(float* heads, int64_t n_heads, int64_t head_dim, int64_t rope_dim, const float* cos_in,
                const float* sin_in, RopePairing pairing = RopePairing::Adjacent);

// In place softmax of n values.
void softmax(float* x, int64_t n);

// gate[i] = silu(gate[i]) * up[i].
void swiglu(float* gate, const float* up, int64_t n);

// gate[i] = gelu(gate[i]) * up[i] with the tanh approximation
// gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (Gemma's gated FFN), in f32.
void geglu(float* gate, const float* up, int64_t n);

// y[i] += x[i].
void add_inplace(float* y, const float* x, int64_t n);

// y[i] *= s.
void scale_inplace(float* y, float s, int64_t n);

// Fixed-order dot product of two f32 vectors (AVX2 when available; same order whatever the caller).
float dot_f32(const float* a, const float* b, int64_t n);

}  // namespace inferscope
