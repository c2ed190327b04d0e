// Internal to kernels/cpu: both families of the row conversions that dequantize_row() runs in
// attention's hot loop (the f16 and q8 KV caches). dequantize.cpp holds the scalar ones and calls
// the AVX2/F16C ones (dequantize_avx2.cpp) when use_avx2(); tests call each directly. Each value is
// one exact conversion (and for Q8_0 one f32 product), so both families give the same bits.
#pragma once
#include <cstdint>

namespace inferscope::cpu {

void dequantize_f16_scalar(const void* src, float* dst, int64_t n);
void dequantize_f16_avx2(const void* src, float* dst, int64_t n);
// nb Q8_0 blocks (32 values each).
void dequantize_q8_0_scalar(const void* src, float* dst, int64_t nb);
void dequantize_q8_0_avx2(const void* src, float* dst, int64_t nb);

}  // namespace inferscope::cpu
