// The inner loops of FlashAttention for one query row against one K/V tile, scalar and AVX2.
// Scores are in the log2 domain (the caller scales q by log2(e)/sqrt(d)), so P = 2^(S - m) = e^(...).
// Both kernels compute each score and each output element in a fixed order, whatever n is.
#pragma once
#include <cstdint>

namespace inferscope {

struct FlashRowKernels {
  // s[j] = q · k_j for the n key rows k_j (head_dim floats each, contiguous).
  void (*scores)(const float* q, const float* k, int32_t n, int32_t head_dim, float* s);
  // One online-softmax step of a query row over the n scores s (overwritten with P), with the
  // n value rows v (contiguous): running max m, running sum l and accumulator o (head_dim) in place.
  // A row that has seen no key yet has m = -inf, l = 0, o = 0.
  void (*update)(float* s, int32_t n, const float* v, int32_t head_dim, float& m, float& l, float* o);
};

const FlashRowKernels& flash_kernels_scalar();
const FlashRowKernels& flash_kernels_avx2();  // only where use_avx2()
// The AVX2 kernels when use_avx2(), else the scalar ones.
const FlashRowKernels& flash_kernels();

}  // namespace inferscope
