// The F16 row conversion: the F16C family against the scalar one, bit for bit, on every half value
// and on lengths and offsets that exercise the eight-wide loop and its tail.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/dequantize_kernels.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {
namespace {

bool f16c_available() {
  const CpuFeatures& f = cpu_features();
  return f.avx2 && f.fma && f.f16c;
}

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

}  // namespace
}  // namespace inferscope
