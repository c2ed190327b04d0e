// Internal to kernels/cpu: both families of the exp-heavy ops of ops.h. ops.cpp holds the scalar
// ones and calls the AVX2 ones (ops_avx2.cpp) when use_avx2(); tests call each family directly.
#pragma once
#include <cstdint>

namespace inferscope::cpu {

void softmax_scalar(float* x, int64_t n);
void swiglu_scalar(float* gate, const float* up, int64_t n);
void geglu_scalar(float* gate, const float* up, int64_t n);

void softmax_avx2(float* x, int64_t n);
void swiglu_avx2(float* gate, const float* up, int64_t n);
void geglu_avx2(float* gate, const float* up, int64_t n);

}  // namespace inferscope::cpu
