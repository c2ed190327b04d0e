// Plain C++ dot products, one per weight type, with int8 activations for the quantized types: the
// fallback family and the readable statement of what each AVX2 kernel computes (integer sums per block, then one float multiply-add per block).
#include <cstring>

#include "kernels/format/quant_blocks.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/matmul/vec_dot.h"

namespace inferscope::cpu {
namespace {

float dot_f32(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

float dot_f16(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const f16_bits*>(w);
  const auto* y = static_cast<const float*>(a);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += fp16_to_f32(x[i]) * y[i];
  return sum;
}

float dot_bf16(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const bf16_bits*>(w);
  const auto* y = static_cast<const float*>(a);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += bf16_to_f32(x[i]) * y[i];
  return sum;
}

// The 5th bits of a Q5_0/Q5_1 block as one little-endian word (bit j belongs to element j).
uint32_t q5_high_bits(const uint8_t* qh) {
  uint32_t bits = 0;
  for (int k = 0; k < 4; ++k) bits |= uint32_t{qh[k]} << (8 * k);
  return bits;
}

float dot_q8_0(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / QK8_0; ++b) {
    int32_t isum = 0;
    for (int j = 0; j < QK8_0; ++j) isum += x[b].qs[j] * y[b].qs[j];
    sum += fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d) * static_cast<float>(isum);
  }
  return sum;
}

float dot_q4_0(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / QK4_0; ++b) {
    int32_t isum = 0;
    for (int j = 0; j < QK4_0 / 2; ++j) {
      isum += ((x[b].qs[j] & 0xF) - 8) * y[b].qs[j];
      isum += ((x[b].qs[j] >> 4) - 8) * y[b].qs[j + QK4_0 / 2];
    }
    sum += fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d) * static_cast<float>(isum);
  }
  return sum;
}

float dot_q4_1(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ4_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / QK4_1; ++b) {
    int32_t isum = 0;
    for (int j = 0; j < QK4_1 / 2; ++j) {
      isum += (x[b].qs[j] & 0xF) * y[b].qs[j];
      isum += (x[b].qs[j] >> 4) * y[b].qs[j + QK4_1 / 2];
    }
    // sum (q*d + m) * a = d * da * sum(q*qa) + m * s, with s = da * sum(qa) stored in the Q8_1 block
    sum += fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d) * static_cast<float>(isum) +
           fp16_to_f32(x[b].m) * fp16_to_f32(y[b].s);
  }
  return sum;
}

float dot_q5_0(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ5_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / QK5_0; ++b) {
    const uint32_t qh = q5_high_bits(x[b].qh);
    int32_t isum = 0;
    for (int j = 0; j < QK5_0 / 2; ++j) {
      const int lo = (x[b].qs[j] & 0xF) | (((qh >> j) & 1) << 4);
      const int hi = (x[b].qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
      isum += (lo - 16) * y[b].qs[j] + (hi - 16) * y[b].qs[j + QK5_0 / 2];
    }
    sum += fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d) * static_cast<float>(isum);
  }
  return sum;
}

float dot_q5_1(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ5_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / QK5_1; ++b) {
    const uint32_t qh = q5_high_bits(x[b].qh);
    int32_t isum = 0;
    for (int j = 0; j < QK5_1 / 2; ++j) {
      const int lo = (x[b].qs[j] & 0xF) | (((qh >> j) & 1) << 4);
      const int hi = (x[b].qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
      isum += lo * y[b].qs[j] + hi * y[b].qs[j + QK5_1 / 2];
    }
    sum += fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d) * static_cast<float>(isum) +
           fp16_to_f32(x[b].m) * fp16_to_f32(y[b].s);
  }
  return sum;
}

// Q4_K and Q5_K: 4 chunks of 64 elements; low nibbles are sub-block 2c, high nibbles sub-block 2c+1.
template <bool kFifthBit>
float dot_q45_k(const uint8_t* qs, const uint8_t* qh, const uint8_t* scales, float d, float dmin,
                const BlockQ8_K& y) {
  int32_t isum = 0, msum = 0;
  for (int c = 0; c < QK_K / 64; ++c) {
    int sc_lo, m_lo, sc_hi, m_hi;
    k_scale_min(scales, 2 * c, sc_lo, m_lo);
    k_scale_min(scales, 2 * c + 1, sc_hi, m_hi);
    int32_t sum_lo = 0, sum_hi = 0;
    for (int l = 0; l < 32; ++l) {
      int lo = qs[32 * c + l] & 0xF, hi = qs[32 * c + l] >> 4;
      if constexpr (kFifthBit) {  // qh[l] holds bit 2c for the low half and bit 2c+1 for the high half
        lo |= ((qh[l] >> (2 * c)) & 1) << 4;
        hi |= ((qh[l] >> (2 * c + 1)) & 1) << 4;
      }
      sum_lo += lo * y.qs[64 * c + l];
      sum_hi += hi * y.qs[64 * c + 32 + l];
    }
    isum += sc_lo * sum_lo + sc_hi * sum_hi;
    // the mins multiply the plain sums of the activations: two bsums of 16 per sub-block
    msum += m_lo * (y.bsums[4 * c] + y.bsums[4 * c + 1]) + m_hi * (y.bsums[4 * c + 2] + y.bsums[4 * c + 3]);
  }
  return d * y.d * static_cast<float>(isum) - dmin * y.d * static_cast<float>(msum);
}

float dot_q4_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / QK_K; ++b)
    sum += dot_q45_k<false>(x[b].qs, nullptr, x[b].scales, fp16_to_f32(x[b].d), fp16_to_f32(x[b].dmin), y[b]);
  return sum;
}

float dot_q5_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ5_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / QK_K; ++b)
    sum += dot_q45_k<true>(x[b].qs, x[b].qh, x[b].scales, fp16_to_f32(x[b].d), fp16_to_f32(x[b].dmin), y[b]);
  return sum;
}

float dot_q6_k(const void* w, const void* a, int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0.0f;
  for (int64_t b = 0; b < n / QK_K; ++b) {
    int32_t isum = 0;
    // two halves of 128: ql[l] holds elements l (low nibble) and l+64 (high), ql[l+32] elements l+32 and
    // l+96; qh[l] holds their top two bits at shifts 0, 2, 4, 6 for l, l+32, l+64, l+96
    for (int h = 0; h < 2; ++h) {
      const uint8_t* ql = x[b].ql + 64 * h;
      const uint8_t* qh = x[b].qh + 32 * h;
      const int8_t* q8 = y[b].qs + 128 * h;
      const int8_t* sc = x[b].scales + 8 * h;
      for (int part = 0; part < 4; ++part) {  // element offset 32*part within the half
        for (int g = 0; g < 2; ++g) {         // two groups of 16, each with its own scale
          int32_t gsum = 0;
          for (int l = 16 * g; l < 16 * g + 16; ++l) {
            const int low = ((part & 1 ? ql[l + 32] : ql[l]) >> (part & 2 ? 4 : 0)) & 0xF;
            const int q = (low | (((qh[l] >> (2 * part)) & 3) << 4)) - 32;
            gsum += q * q8[32 * part + l];
          }
          isum += sc[2 * part + g] * gsum;
        }
      }
    }
    sum += fp16_to_f32(x[b].d) * y[b].d * static_cast<float>(isum);
  }
  return sum;
}

template <DType kAct>
void quantize_as(const float* x, void* dst, int64_t n) {
  quantize_row(kAct, x, dst, n);
}

constexpr DotKernel kF32{DType::F32, nullptr, dot_f32, nullptr, "scalar"};
constexpr DotKernel kF16{DType::F32, nullptr, dot_f16, nullptr, "scalar"};
constexpr DotKernel kBF16{DType::F32, nullptr, dot_bf16, nullptr, "scalar"};
constexpr DotKernel kQ8_0{DType::Q8_0, quantize_as<DType::Q8_0>, dot_q8_0, nullptr, "scalar"};
constexpr DotKernel kQ4_0{DType::Q8_0, quantize_as<DType::Q8_0>, dot_q4_0, nullptr, "scalar"};
constexpr DotKernel kQ4_1{DType::Q8_1, quantize_as<DType::Q8_1>, dot_q4_1, nullptr, "scalar"};
constexpr DotKernel kQ5_0{DType::Q8_0, quantize_as<DType::Q8_0>, dot_q5_0, nullptr, "scalar"};
constexpr DotKernel kQ5_1{DType::Q8_1, quantize_as<DType::Q8_1>, dot_q5_1, nullptr, "scalar"};
constexpr DotKernel kQ4_K{DType::Q8_K, quantize_as<DType::Q8_K>, dot_q4_k, nullptr, "scalar"};
constexpr DotKernel kQ5_K{DType::Q8_K, quantize_as<DType::Q8_K>, dot_q5_k, nullptr, "scalar"};
constexpr DotKernel kQ6_K{DType::Q8_K, quantize_as<DType::Q8_K>, dot_q6_k, nullptr, "scalar"};

}  // namespace

const DotKernel* scalar_kernel(DType weight_type, ActivationPrecision activations) {
  switch (weight_type) {
    case DType::F32: return &kF32;
    case DType::F16: return &kF16;
    case DType::BF16: return &kBF16;
    default: break;
  }
  if (activations == ActivationPrecision::F32) return scalar_f32act_kernel(weight_type);
  switch (weight_type) {
    case DType::Q8_0: return &kQ8_0;
    case DType::Q4_0: return &kQ4_0;
    case DType::Q4_1: return &kQ4_1;
    case DType::Q5_0: return &kQ5_0;
    case DType::Q5_1: return &kQ5_1;
    case DType::Q4_K: return &kQ4_K;
    case DType::Q5_K: return &kQ5_K;
    case DType::Q6_K: return &kQ6_K;
    default: return nullptr;
  }
}

}  // namespace inferscope::cpu
