// Internal to kernels/cpu: the K-quant writers quantize_row() dispatches to, and the per-sub-block
// scale searches they run (exposed for the tests). The searches are the ones of ggml's reference
// quantizers (make_qkx2_quants for Q4_K/Q5_K, make_qx_quants with x^2 weights for Q6_K), which is
// what llama-quantize runs without an importance matrix, so our files match its quality.
#pragma once
#include <cstdint>

#include "kernels/format/quant_blocks.h"

namespace inferscope::cpu {

// The inverse scales an affine search tries: (nmax + first + step*i) / (max + min) for i < count, min
// the best fit's so far.
struct ScaleGrid {
  float first;
  float step;
  int count;
};
inline constexpr ScaleGrid kQ4KGrid{-1.0f, 0.1f, 21};
inline constexpr ScaleGrid kQ5KGrid{-0.5f, 0.1f, 16};
inline constexpr ScaleGrid kNoSearch{0.0f, 0.0f, 0};  // only the min/max start

// x_i ~ scale * q_i - min with q_i in [0, nmax]; error = sum of w_i * (that - x_i)^2 over the sub-block.
struct AffineFit {
  float scale;
  float min;
  float error;
};

// The weights of a sub-block's squared error, as ggml's reference: rms(x) + |x_i|.
void k_error_weights(const float* x, int n, float* w);
// Starts from q spanning [min(x, 0), max(x)]; then for each grid candidate in turn rounds every element
// from the best fit's min so far, refits scale and min to those quants by weighted least squares (min
// kept >= 0) and keeps the fit if its error is less. n <= 32.
AffineFit fit_scale_min(const float* x, const float* w, int n, int nmax, const ScaleGrid& grid);
// x_i ~ scale * q_i with q_i in [-nmax, nmax-1]: the least-squares scale (weights x_i^2) over the
// roundings at inverse scales -(nmax + 0.1*i) / max, |i| <= 9, max the signed largest element.
float fit_symmetric_scale(const float* x, int n, int nmax);

// nb super-blocks of QK_K elements each.
void quant_q4_k(const float* x, BlockQ4_K* b, int64_t nb);
void quant_q5_k(const float* x, BlockQ5_K* b, int64_t nb);
void quant_q6_k(const float* x, BlockQ6_K* b, int64_t nb);

}  // namespace inferscope::cpu
