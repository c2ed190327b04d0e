// RoPE on Q and K in one kernel: one block per token, one thread per pair (strided); each thread
// computes its pair's cos/sin once (ops_element.h, as rope_cos_sin) and rotates it in every Q and K head.
#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"
#include "kernels/cuda/ops_element.h"

namespace inferscope::gpu {
namespace {

constexpr int kThreads = 128;

// The shape and the host-computed frequency step, passed by value.
struct RopeArgs {
  RopeShape shape;
  double freq_step;
};

__device__ void rotate_heads(float* heads, int64_t n_heads, int64_t head_dim, int64_t i, int64_t n_pairs, bool neox,
                             float c, float s) {
  const int64_t first = rope_pair_first(i, neox), stride = rope_pair_stride(n_pairs, neox);
  for (int64_t h = 0; h < n_heads; ++h) rope_rotate(heads[h * head_dim + first], heads[h * head_dim + first + stride], c, s);
}

__global__ void rope_qk_kernel(float* q, float* k, const int32_t* positions, RopeArgs args) {
  const RopeShape& sh = args.shape;
  const int64_t t = blockIdx.x;
  const int32_t pos = positions[t];
  const int64_t n_pairs = (sh.rope_dim < sh.head_dim ? sh.rope_dim : sh.head_dim) / 2;
  const bool neox = sh.pairing == RopePairing::Neox;
  for (int64_t i = threadIdx.x; i < n_pairs; i += kThreads) {
    const double factor = sh.freq_factors != nullptr ? static_cast<double>(sh.freq_factors[i]) : 1.0;
    float c = 0.0f, s = 0.0f;
    rope_pair_cos_sin(i, rope_pair_freq(i, args.freq_step), pos, sh.freq_scale, factor, sh.use_yarn ? &sh.yarn : nullptr,
                      c, s);
    rotate_heads(q + t * sh.n_q_heads * sh.head_dim, sh.n_q_heads, sh.head_dim, i, n_pairs, neox, c, s);
    rotate_heads(k + t * sh.n_kv_heads * sh.head_dim, sh.n_kv_heads, sh.head_dim, i, n_pairs, neox, c, s);
  }
}

}  // namespace

void rope_qk(float* q, float* k, const int32_t* positions, int64_t n_tok, const RopeShape& shape, cudaStream_t stream) {
  if (shape.rope_dim <= 0 || shape.rope_dim % 2 != 0)
    throw std::invalid_argument("rope_qk: rope_dim must be even and positive, got " + std::to_string(shape.rope_dim));
  if (n_tok == 0) return;
  const RopeArgs args{shape, rope_freq_step(shape.freq_base, shape.rope_dim)};
  rope_qk_kernel<<<static_cast<unsigned>(n_tok), kThreads, 0, stream>>>(q, k, positions, args);
  INFERSCOPE_CUDA_CHECK_LAUNCH("rope_qk_kernel");
}

}  // namespace inferscope::gpu
