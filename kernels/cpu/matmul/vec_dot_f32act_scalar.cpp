// Plain C++ f32-activation dots of the quantized types ("weight-only quantization"): each weight
// block is dequantized by the reference dequantize_row and multiplied with the f32 activations.
// The readable statement of what the AVX2 f32-activation kernels compute.
#include "kernels/format/quant_blocks.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/matmul/vec_dot.h"

namespace inferscope::cpu {
namespace {

template <DType kType>
float dot_dequantized(const void* w, const void* a, int64_t n) {
  const DTypeInfo& info = dtype_info(kType);
  const auto* blocks = static_cast<const uint8_t*>(w);
  const auto* x = static_cast<const float*>(a);
  float values[QK_K];  // one block, dequantized (QK_K is the largest block size)
  float sum = 0.0f;
  for (int64_t b = 0; b < n / info.block_size; ++b) {
    dequantize_row(kType, blocks + b * info.block_bytes, values, info.block_size);
    for (int64_t i = 0; i < info.block_size; ++i) sum += values[i] * x[b * info.block_size + i];
  }
  return sum;
}

template <DType kType>
constexpr DotKernel kernel{DType::F32, nullptr, dot_dequantized<kType>, nullptr, "scalar"};

}  // namespace

const DotKernel* scalar_f32act_kernel(DType weight_type) {
  switch (weight_type) {
    case DType::Q8_0: return &kernel<DType::Q8_0>;
    case DType::Q4_0: return &kernel<DType::Q4_0>;
    case DType::Q4_1: return &kernel<DType::Q4_1>;
    case DType::Q5_0: return &kernel<DType::Q5_0>;
    case DType::Q5_1: return &kernel<DType::Q5_1>;
    case DType::Q4_K: return &kernel<DType::Q4_K>;
    case DType::Q5_K: return &kernel<DType::Q5_K>;
    case DType::Q6_K: return &kernel<DType::Q6_K>;
    default: return nullptr;
  }
}

}  // namespace inferscope::cpu
