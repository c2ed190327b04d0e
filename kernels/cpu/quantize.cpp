// Reference quantization of the formats we write, rounding exactly as ggml's reference quantizers do
// (so the files we save load in llama.cpp and the activations match what its kernels expect). The
// K-quants' scale searches are in quantize_k.cpp.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/format/quant_blocks.h"
#include "kernels/cpu/quant_math.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/quantize_k.h"

namespace inferscope {
namespace {

using cpu::round_clamped;
using cpu::signed_absmax;

float absmax(const float* x, int n) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) amax = std::max(amax, std::fabs(x[j]));
  return amax;
}

void min_max(const float* x, int n, float& min, float& max) {
  min = FLT_MAX;
  max = -FLT_MAX;
  for (int j = 0; j < n; ++j) {
    min = std::min(min, x[j]);
    max = std::max(max, x[j]);
  }
}

// Sets bit i of a Q5 block's little-endian 32-bit qh to q's fifth bit.
void set_q5_high_bit(uint8_t qh[4], int i, int q) { qh[i / 8] |= static_cast<uint8_t>(((q >> 4) & 1) << (i % 8)); }

// One 32-element Q8_0/Q8_1 block (QK8_0 == QK8_1): d = amax/127, q = round(x/d) (half away from zero). Returns sum(q).
int quant_q8_block(const float* x, f16_bits& d_out, int8_t* qs, float& d) {
  d = absmax(x, QK8_0) / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  d_out = f32_to_fp16(d);
  int sum = 0;
  for (int j = 0; j < QK8_0; ++j) {
    qs[j] = static_cast<int8_t>(std::round(x[j] * id));
    sum += qs[j];
  }
  return sum;
}

void quant_q8_0(const float* x, BlockQ8_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += QK8_0) {
    float d = 0.0f;
    quant_q8_block(x, b[i].d, b[i].qs, d);
  }
}

void quant_q8_1(const float* x, BlockQ8_1* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += QK8_1) {
    float d = 0.0f;
    const int sum = quant_q8_block(x, b[i].d, b[i].qs, d);
    b[i].s = f32_to_fp16(static_cast<float>(sum) * d);  // with the unrounded d, as ggml
  }
}

// Q4_0: d = max/-8 so the largest-magnitude element lands on q = 0; q = floor(x/d + 8.5) capped at 15.
void quant_q4_0(const float* x, BlockQ4_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += QK4_0) {
    const float d = signed_absmax(x, QK4_0) / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = f32_to_fp16(d);
    for (int j = 0; j < QK4_0 / 2; ++j) {
      const int lo = std::min(15, static_cast<int>(x[j] * id + 8.5f));
      const int hi = std::min(15, static_cast<int>(x[j + QK4_0 / 2] * id + 8.5f));
      b[i].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

// Q4_1: d = (max-min)/15, m = min; q = floor((x-min)/d + 0.5) capped at 15.
void quant_q4_1(const float* x, BlockQ4_1* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += QK4_1) {
    float min = 0.0f, max = 0.0f;
    min_max(x, QK4_1, min, max);
    const float d = (max - min) / 15.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = f32_to_fp16(d);
    b[i].m = f32_to_fp16(min);
    for (int j = 0; j < QK4_1 / 2; ++j) {
      const int lo = std::min(15, static_cast<int>((x[j] - min) * id + 0.5f));
      const int hi = std::min(15, static_cast<int>((x[j + QK4_1 / 2] - min) * id + 0.5f));
      b[i].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

// Q5_0: d = max/-16; q = floor(x/d + 16.5) capped at 31; the fifth bits go to qh.
void quant_q5_0(const float* x, BlockQ5_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += QK5_0) {
    const float d = signed_absmax(x, QK5_0) / -16.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = f32_to_fp16(d);
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    for (int j = 0; j < QK5_0 / 2; ++j) {
      const int lo = std::min(31, static_cast<int>(x[j] * id + 16.5f));
      const int hi = std::min(31, static_cast<int>(x[j + QK5_0 / 2] * id + 16.5f));
      b[i].qs[j] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
      set_q5_high_bit(b[i].qh, j, lo);
      set_q5_high_bit(b[i].qh, j + QK5_0 / 2, hi);
    }
  }
}

// Q5_1: d = (max-min)/31, m = min; q = floor((x-min)/d + 0.5) (the cap at 31 only guards rounding).
void quant_q5_1(const float* x, BlockQ5_1* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += QK5_1) {
    float min = 0.0f, max = 0.0f;
    min_max(x, QK5_1, min, max);
    const float d = (max - min) / 31.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    b[i].d = f32_to_fp16(d);
    b[i].m = f32_to_fp16(min);
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    for (int j = 0; j < QK5_1 / 2; ++j) {
      const int lo = std::min(31, static_cast<int>((x[j] - min) * id + 0.5f));
      const int hi = std::min(31, static_cast<int>((x[j + QK5_1 / 2] - min) * id + 0.5f));
      b[i].qs[j] = static_cast<uint8_t>((lo & 0x0f) | ((hi & 0x0f) << 4));
      set_q5_high_bit(b[i].qh, j, lo);
      set_q5_high_bit(b[i].qh, j + QK5_1 / 2, hi);
    }
  }
}

// Q8_K: scale -127/max so the largest-magnitude element lands on -127; round half to even; d kept in f32.
void quant_q8_k(const float* x, BlockQ8_K* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += QK_K) {
    const float max = signed_absmax(x, QK_K);
    if (max == 0.0f) {
      std::memset(&b[i], 0, sizeof(b[i]));
      continue;
    }
    const float iscale = -127.0f / max;
    for (int j = 0; j < QK_K; ++j) {
      b[i].qs[j] = static_cast<int8_t>(round_clamped(iscale * x[j], -128, 127));
    }
    for (int g = 0; g < QK_K / 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += b[i].qs[16 * g + j];
      b[i].bsums[g] = static_cast<int16_t>(sum);
    }
    b[i].d = 1.0f / iscale;
  }
}

}  // namespace

bool can_quantize(DType type) {
  switch (type) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::Q8_0:
    case DType::Q8_1:
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q4_K:
    case DType::Q5_K:
    case DType::Q6_K:
    case DType::Q8_K: return true;
    default: return false;
  }
}

void quantize_row(DType type, const float* src, void* dst, int64_t n) {
  const DTypeInfo& info = dtype_info(type);
  if (!can_quantize(type)) throw std::invalid_argument("cannot quantize to " + std::string(info.name));
  row_bytes(type, n);  // throws unless n is a whole number of blocks
  const int64_t nb = n / info.block_size;
  switch (type) {
    case DType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::F16: {
      auto* h = static_cast<f16_bits*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = f32_to_fp16(src[i]);
      return;
    }
    case DType::BF16: {
      auto* h = static_cast<bf16_bits*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = f32_to_bf16(src[i]);
      return;
    }
    case DType::Q8_0: quant_q8_0(src, static_cast<BlockQ8_0*>(dst), nb); return;
    case DType::Q8_1: quant_q8_1(src, static_cast<BlockQ8_1*>(dst), nb); return;
    case DType::Q4_0: quant_q4_0(src, static_cast<BlockQ4_0*>(dst), nb); return;
    case DType::Q4_1: quant_q4_1(src, static_cast<BlockQ4_1*>(dst), nb); return;
    case DType::Q5_0: quant_q5_0(src, static_cast<BlockQ5_0*>(dst), nb); return;
    case DType::Q5_1: quant_q5_1(src, static_cast<BlockQ5_1*>(dst), nb); return;
    case DType::Q4_K: cpu::quant_q4_k(src, static_cast<BlockQ4_K*>(dst), nb); return;
    case DType::Q5_K: cpu::quant_q5_k(src, static_cast<BlockQ5_K*>(dst), nb); return;
    case DType::Q6_K: cpu::quant_q6_k(src, static_cast<BlockQ6_K*>(dst), nb); return;
    case DType::Q8_K: quant_q8_k(src, static_cast<BlockQ8_K*>(dst), nb); return;
    default: return;  // unreachable: can_quantize() said no above
  }
}

}  // namespace inferscope
