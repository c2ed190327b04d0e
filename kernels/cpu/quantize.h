// Dequantize (every loadable type) and quantize (the formats we write) one row.
#pragma once
#include <cstdint>

#include "kernels/format/dtype.h"

namespace inferscope {

// dst[0..n) = the values of the n elements at src. n must be a multiple of the block size.
void dequantize_row(DType type, const void* src, float* dst, int64_t n);

// Round n floats into `type` (F32, F16, BF16, Q8_0, Q8_1, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K, Q8_K).
// Throws std::invalid_argument for a type we cannot write.
void quantize_row(DType type, const float* src, void* dst, int64_t n);
bool can_quantize(DType type);

float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);  // round to nearest even
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);  // round to nearest even

}  // namespace inferscope
