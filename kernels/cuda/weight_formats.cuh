// How the CUDA kernels read each weight format: one element (embedding rows, row tails) or a group of
// 8 elements (the GEMV's unit of work: one lane loads it with a few wide loads and decodes it in
// registers with dequant_element.h). Groups tile a row in order: for F32/F16/Q8_0 group g holds
// columns 8g..8g+7; for Q4_0/Q4_1 it is quarter g%4 of block g/4 (see q4_quarter_column). Either way a
// group's elements 0..3 and 4..7 each lie in 4 consecutive columns: column(g, 0) + k, column(g, 4) + k.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/format/dtype.h"
#include "kernels/format/quant_blocks.h"
#include "kernels/cuda/dequant_element.h"

namespace inferscope::gpu {

constexpr int kGroup = 8;  // elements a GEMV lane decodes at a time

// Two little-endian u16 loads as one u32 (blocks are only 2-byte aligned).
__device__ inline uint32_t load_u32_from_u16(const uint8_t* p) {
  const auto* h = reinterpret_cast<const uint16_t*>(p);
  return static_cast<uint32_t>(__ldg(h)) | (static_cast<uint32_t>(__ldg(h + 1)) << 16);
}

struct F32Format {
  __device__ static float element(const uint8_t* row, int64_t i) { return __ldg(reinterpret_cast<const float*>(row) + i); }
  __device__ static int64_t column(int64_t g, int k) { return kGroup * g + k; }
  __device__ static void load_group(const uint8_t* row, int64_t g, float (&w)[kGroup]) {
    const auto* p = reinterpret_cast<const float*>(row) + kGroup * g;
    if ((reinterpret_cast<uintptr_t>(p) & 15) == 0) {
      // two 16-byte loads when the row allows it
      const float4 a = __ldg(reinterpret_cast<const float4*>(p)), b = __ldg(reinterpret_cast<const float4*>(p) + 1);
      const float v[kGroup] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
      for (int k = 0; k < kGroup; ++k) w[k] = v[k];
    } else {
#pragma unroll
      for (int k = 0; k < kGroup; ++k) w[k] = __ldg(p + k);
    }
  }
};

struct F16Format {
  __device__ static float element(const uint8_t* row, int64_t i) {
    return f16_to_f32(__ldg(reinterpret_cast<const uint16_t*>(row) + i));
  }
  __device__ static int64_t column(int64_t g, int k) { return kGroup * g + k; }
  __device__ static void load_group(const uint8_t* row, int64_t g, float (&w)[kGroup]) {
    const auto* p = reinterpret_cast<const uint16_t*>(row) + kGroup * g;
    if ((reinterpret_cast<uintptr_t>(p) & 15) == 0) {
      // one 16-byte load of 8 halves
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
      const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int k = 0; k < kGroup; ++k) w[k] = f16_to_f32(static_cast<f16_bits>(words[k / 2] >> (16 * (k % 2))));
    } else {
#pragma unroll
      for (int k = 0; k < kGroup; ++k) w[k] = f16_to_f32(__ldg(p + k));
    }
  }
};

struct Q8_0Format {
  __device__ static const BlockQ8_0* block(const uint8_t* row, int64_t b) { return reinterpret_cast<const BlockQ8_0*>(row) + b; }
  __device__ static float element(const uint8_t* row, int64_t i) { return q8_0_element(*block(row, i / QK8_0), i % QK8_0); }
  __device__ static int64_t column(int64_t g, int k) { return kGroup * g + k; }
  __device__ static void load_group(const uint8_t* row, int64_t g, float (&w)[kGroup]) {
    const BlockQ8_0* b = block(row, g / 4);
    const float d = f16_to_f32(__ldg(&b->d));
    // 8 quants at offset 2 + 8q: 2-byte aligned, so two u32s built from u16 loads
    const auto* qs = reinterpret_cast<const uint8_t*>(b->qs) + kGroup * (g % 4);
    const uint32_t lo = load_u32_from_u16(qs), hi = load_u32_from_u16(qs + 4);
#pragma unroll
    for (int k = 0; k < kGroup; ++k) {
      const auto q = static_cast<int8_t>(((k < 4 ? lo : hi) >> (8 * (k % 4))) & 0xff);
      w[k] = q8_0_value(q, d);
    }
  }
};

// Q4_0 and Q4_1 share their nibble layout; Q4_1 adds the offset m.
template <typename Block>
struct Q4Format {
  static constexpr bool kHasMin = std::is_same_v<Block, BlockQ4_1>;
  __device__ static const Block* block(const uint8_t* row, int64_t b) { return reinterpret_cast<const Block*>(row) + b; }
  __device__ static float element(const uint8_t* row, int64_t i) {
    if constexpr (kHasMin) return q4_1_element(*block(row, i / QK4_1), i % QK4_1);
    else return q4_0_element(*block(row, i / QK4_0), i % QK4_0);
  }
  __device__ static int64_t column(int64_t g, int k) { return QK4_0 * (g / 4) + q4_quarter_column(static_cast<int>(g % 4), k); }
  __device__ static void load_group(const uint8_t* row, int64_t g, float (&w)[kGroup]) {
    const Block* b = block(row, g / 4);
    const float d = f16_to_f32(__ldg(&b->d));
    const uint32_t bytes = load_u32_from_u16(reinterpret_cast<const uint8_t*>(b->qs) + 4 * (g % 4));
    float m = 0.0f;
    if constexpr (kHasMin) m = f16_to_f32(__ldg(&b->m));
#pragma unroll
    for (int k = 0; k < kGroup; ++k) {
      const int q = q4_quarter_nibble(bytes, k);
      if constexpr (kHasMin) w[k] = q4_1_value(q, d, m);
      else w[k] = q4_0_value(q, d);
    }
  }
};

// Calls f(Format{}) for the weight type (CUDA's supported ones); throws for any other.
template <typename F>
void with_weight_format(DType type, const char* op, F&& f) {
  switch (type) {
    case DType::F32: return f(F32Format{});
    case DType::F16: return f(F16Format{});
    case DType::Q8_0: return f(Q8_0Format{});
    case DType::Q4_0: return f(Q4Format<BlockQ4_0>{});
    case DType::Q4_1: return f(Q4Format<BlockQ4_1>{});
    default:
      throw std::invalid_argument(std::string(op) + ": CUDA does not read " + std::string(dtype_name(type)) + " weights");
  }
}

}  // namespace inferscope::gpu
