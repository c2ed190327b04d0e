// Reference dequantization: one plain loop per type, element by element as quant_blocks.h describes.
// The fast kernels are tested against these, so clarity wins over speed here; the one exception is
// F16 (the KV cache format, hot in attention), which uses F16C when use_avx2().
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/dequantize_kernels.h"
#include "kernels/format/quant_blocks.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {
namespace {

// Bit i of the little-endian 32-bit qh of a Q5_0/Q5_1 block, as the value 16 (q's fifth bit).
int q5_high_bit(const uint8_t qh[4], int i) { return ((qh[i / 8] >> (i % 8)) & 1) << 4; }

void dequant_q4_0(const BlockQ4_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK4_0) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < QK4_0 / 2; ++j) {
      y[j] = static_cast<float>((b[i].qs[j] & 0x0f) - 8) * d;
      y[j + QK4_0 / 2] = static_cast<float>((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void dequant_q4_1(const BlockQ4_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK4_1) {
    const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
    for (int j = 0; j < QK4_1 / 2; ++j) {
      y[j] = static_cast<float>(b[i].qs[j] & 0x0f) * d + m;
      y[j + QK4_1 / 2] = static_cast<float>(b[i].qs[j] >> 4) * d + m;
    }
  }
}

void dequant_q5_0(const BlockQ5_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK5_0) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < QK5_0 / 2; ++j) {
      const int lo = (b[i].qs[j] & 0x0f) | q5_high_bit(b[i].qh, j);
      const int hi = (b[i].qs[j] >> 4) | q5_high_bit(b[i].qh, j + QK5_0 / 2);
      y[j] = static_cast<float>(lo - 16) * d;
      y[j + QK5_0 / 2] = static_cast<float>(hi - 16) * d;
    }
  }
}

void dequant_q5_1(const BlockQ5_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK5_1) {
    const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
    for (int j = 0; j < QK5_1 / 2; ++j) {
      const int lo = (b[i].qs[j] & 0x0f) | q5_high_bit(b[i].qh, j);
      const int hi = (b[i].qs[j] >> 4) | q5_high_bit(b[i].qh, j + QK5_1 / 2);
      y[j] = static_cast<float>(lo) * d + m;
      y[j + QK5_1 / 2] = static_cast<float>(hi) * d + m;
    }
  }
}

void dequant_q8_1(const BlockQ8_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK8_1) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < QK8_1; ++j) y[j] = static_cast<float>(b[i].qs[j]) * d;
  }
}

// The 4-bit part of element 32*j + l of a Q4_K/Q5_K block: even sub-blocks take low nibbles.
int k_nibble(const uint8_t* qs, int j, int l) {
  const uint8_t byte = qs[32 * (j / 2) + l];
  return (j % 2 == 0) ? (byte & 0x0f) : (byte >> 4);
}

void dequant_q4_k(const BlockQ4_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK_K) {
    const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
    for (int j = 0; j < QK_K / 32; ++j) {
      uint8_t sc = 0, mn = 0;
      k_scale_min(j, b[i].scales, sc, mn);
      for (int l = 0; l < 32; ++l) {
        y[32 * j + l] = d * sc * static_cast<float>(k_nibble(b[i].qs, j, l)) - dmin * mn;
      }
    }
  }
}

void dequant_q5_k(const BlockQ5_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK_K) {
    const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
    for (int j = 0; j < QK_K / 32; ++j) {
      uint8_t sc = 0, mn = 0;
      k_scale_min(j, b[i].scales, sc, mn);
      for (int l = 0; l < 32; ++l) {
        const int q = k_nibble(b[i].qs, j, l) | (((b[i].qh[l] >> j) & 1) << 4);
        y[32 * j + l] = d * sc * static_cast<float>(q) - dmin * mn;
      }
    }
  }
}

void dequant_q6_k(const BlockQ6_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK_K) {
    const float d = fp16_to_f32(b[i].d);
    for (int e = 0; e < QK_K; ++e) {
      // e = 128*h + 32*k + l; see BlockQ6_K for where each part of q lives.
      const int h = e / 128, k = (e / 32) % 4, l = e % 32;
      const uint8_t low_byte = b[i].ql[64 * h + 32 * (k % 2) + l];
      const int low = (k < 2) ? (low_byte & 0x0f) : (low_byte >> 4);
      const int high = (b[i].qh[32 * h + l] >> (2 * k)) & 3;
      const int q = low | (high << 4);
      y[e] = d * static_cast<float>(b[i].scales[e / 16]) * static_cast<float>(q - 32);
    }
  }
}

void dequant_q8_k(const BlockQ8_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += QK_K) {
    for (int j = 0; j < QK_K; ++j) y[j] = static_cast<float>(b[i].qs[j]) * b[i].d;
  }
}

}  // namespace

namespace cpu {

void dequantize_f16_scalar(const void* src, float* dst, int64_t n) {
  const auto* h = static_cast<const f16_bits*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(h[i]);
}

void dequantize_q8_0_scalar(const void* src, float* dst, int64_t nb) {
  const auto* b = static_cast<const BlockQ8_0*>(src);
  for (int64_t i = 0; i < nb; ++i, dst += QK8_0) {
    const float d = fp16_to_f32(b[i].d);
    for (int j = 0; j < QK8_0; ++j) dst[j] = static_cast<float>(b[i].qs[j]) * d;
  }
}

}  // namespace cpu

void dequantize_row(DType type, const void* src, float* dst, int64_t n) {
  const DTypeInfo& info = dtype_info(type);
  row_bytes(type, n);  // throws unless n is a whole number of blocks
  const int64_t nb = n / info.block_size;
  switch (type) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16:
      if (use_avx2()) {
        cpu::dequantize_f16_avx2(src, dst, n);
      } else {
        cpu::dequantize_f16_scalar(src, dst, n);
      }
      return;
    case DType::BF16: {
      const auto* h = static_cast<const bf16_bits*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
      return;
    }
    case DType::Q4_0: dequant_q4_0(static_cast<const BlockQ4_0*>(src), dst, nb); return;
    case DType::Q4_1: dequant_q4_1(static_cast<const BlockQ4_1*>(src), dst, nb); return;
    case DType::Q5_0: dequant_q5_0(static_cast<const BlockQ5_0*>(src), dst, nb); return;
    case DType::Q5_1: dequant_q5_1(static_cast<const BlockQ5_1*>(src), dst, nb); return;
    case DType::Q8_0:
      if (use_avx2()) {
        cpu::dequantize_q8_0_avx2(src, dst, nb);
      } else {
        cpu::dequantize_q8_0_scalar(src, dst, nb);
      }
      return;
    case DType::Q8_1: dequant_q8_1(static_cast<const BlockQ8_1*>(src), dst, nb); return;
    case DType::Q4_K: dequant_q4_k(static_cast<const BlockQ4_K*>(src), dst, nb); return;
    case DType::Q5_K: dequant_q5_k(static_cast<const BlockQ5_K*>(src), dst, nb); return;
    case DType::Q6_K: dequant_q6_k(static_cast<const BlockQ6_K*>(src), dst, nb); return;
    case DType::Q8_K: dequant_q8_k(static_cast<const BlockQ8_K*>(src), dst, nb); return;
    case DType::Q2_K:
    case DType::Q3_K: break;
  }
  throw std::invalid_argument("cannot dequantize " + std::string(info.name));
}

}  // namespace inferscope
