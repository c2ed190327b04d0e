// Internal to kernels/cpu: both families of the F16 row conversion that dequantize_row() runs (the
// f16 KV cache makes it hot in attention). dequantize.cpp holds the scalar one and calls the F16C
// one (dequantize_avx2.cpp) when use_avx2(); tests call each directly. F16 -> F32 is exact, so both
// give the same bits.
#pragma once
#include <cstdint>

namespace inferscope::cpu {

void dequantize_f16_scalar(const void* src, float* dst, int64_t n);
void dequantize_f16_avx2(const void* src, float* dst, int64_t n);

}  // namespace inferscope::cpu
