// The row conversions attention runs on KV rows: F16 (the F16C family against the scalar one, bit
// for bit, on every half value and on lengths and offsets that exercise the eight-wide loop and its
// tail) and Q8_0 (the AVX2 family against the scalar one, bit for bit, on every int8 and scales
// from subnormal to the f16 maximum).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/dequantize_kernels.h"
#include "kernels/format/quant_blocks.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {
namespace {

bool f16c_available() { return cpu_features().runs_avx2_kernels(); }

std::vector<uint16_t> every_half() {
  std::vector<uint16_t> h(65536);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<uint16_t>(i);
  return h;
}

TEST(DequantizeF16, Avx2MatchesScalarOnEveryValue) {
  if (!f16c_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
  const std::vector<uint16_t> h = every_half();
  std::vector<float> want(h.size()), got(h.size(), std::numeric_limits<float>::quiet_NaN());
  cpu::dequantize_f16_scalar(h.data(), want.data(), static_cast<int64_t>(h.size()));
  cpu::dequantize_f16_avx2(h.data(), got.data(), static_cast<int64_t>(h.size()));
  for (size_t i = 0; i < h.size(); ++i)
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0) << "half 0x" << std::hex << h[i];
}

TEST(DequantizeF16, TailsAndOffsetsWriteExactlyNElements) {
  if (!f16c_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
  const std::vector<uint16_t> h = every_half();
  for (int64_t offset : {0, 1, 3})
    for (int64_t n = 0; n <= 19; ++n) {
      // one poisoned slot past the end must stay untouched
      std::vector<float> want(n + 1, -7.0f), got(n + 1, -7.0f);
      const uint16_t* src = h.data() + 15360 + offset;  // 1.0 and up: finite, distinct values
      cpu::dequantize_f16_scalar(src, want.data(), n);
      cpu::dequantize_f16_avx2(src, got.data(), n);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << "n " << n;
      EXPECT_EQ(got[n], -7.0f);
    }
}

TEST(DequantizeF16, DequantizeRowUsesTheSameValues) {
  const std::vector<uint16_t> h = every_half();
  std::vector<float> want(h.size()), got(h.size());
  cpu::dequantize_f16_scalar(h.data(), want.data(), static_cast<int64_t>(h.size()));
  dequantize_row(DType::F16, h.data(), got.data(), static_cast<int64_t>(h.size()));
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
}

// Blocks holding every int8 value (8 blocks of 32), each with a scale from the list.
std::vector<BlockQ8_0> q8_blocks(const std::vector<uint16_t>& scales) {
  std::vector<BlockQ8_0> blocks;
  std::mt19937 rng(3);
  for (uint16_t scale : scales) {
    for (int k = 0; k < 8; ++k) {
      BlockQ8_0 b;
      b.d = scale;
      for (int j = 0; j < QK8_0; ++j) b.qs[j] = static_cast<int8_t>(k * QK8_0 + j - 128);
      std::shuffle(b.qs, b.qs + QK8_0, rng);
      blocks.push_back(b);
    }
  }
  return blocks;
}

TEST(DequantizeQ8_0, Avx2MatchesScalarBitForBit) {
  if (!f16c_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
  // 0, the smallest subnormal, 2^-14, 1/127, 0.5, 1, 3.14, 65504 (the f16 maximum), -2
  const std::vector<BlockQ8_0> blocks = q8_blocks({0x0000, 0x0001, 0x0400, 0x2008, 0x3800, 0x3C00, 0x4248, 0x7BFF, 0xC000});
  const int64_t nb = static_cast<int64_t>(blocks.size());
  std::vector<float> want(nb * QK8_0), got(want.size() + 1, -7.0f);
  cpu::dequantize_q8_0_scalar(blocks.data(), want.data(), nb);
  cpu::dequantize_q8_0_avx2(blocks.data(), got.data(), nb);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0);
  EXPECT_EQ(got.back(), -7.0f) << "wrote past nb blocks";
  std::vector<float> row(want.size());
  dequantize_row(DType::Q8_0, blocks.data(), row.data(), nb * QK8_0);
  EXPECT_EQ(std::memcmp(row.data(), want.data(), want.size() * sizeof(float)), 0);
  for (int j = 0; j < QK8_0; ++j) EXPECT_EQ(want[40 * QK8_0 + j], blocks[40].qs[j]) << "scale 1.0 gives the int8 itself";
}

}  // namespace
}  // namespace inferscope
