// Element types: the dtype table, row sizes, names, and the scalar f16/bf16 conversions.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>

#include "kernels/format/dtype.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {
namespace {

struct Expected {
  DType type;
  uint32_t id;
  const char* name;
  int64_t block_size;
  size_t block_bytes;
  bool can_load;
};

// ggml's ids, names and block geometry (ggml.c type_traits), written out by hand.
constexpr Expected kAll[] = {
    {DType::F32, 0, "f32", 1, 4, true},       {DType::F16, 1, "f16", 1, 2, true},
    {DType::Q4_0, 2, "q4_0", 32, 18, true},   {DType::Q4_1, 3, "q4_1", 32, 20, true},
    {DType::Q5_0, 6, "q5_0", 32, 22, true},   {DType::Q5_1, 7, "q5_1", 32, 24, true},
    {DType::Q8_0, 8, "q8_0", 32, 34, true},   {DType::Q8_1, 9, "q8_1", 32, 36, true},
    {DType::Q2_K, 10, "q2_K", 256, 84, false}, {DType::Q3_K, 11, "q3_K", 256, 110, false},
    {DType::Q4_K, 12, "q4_K", 256, 144, true}, {DType::Q5_K, 13, "q5_K", 256, 176, true},
    {DType::Q6_K, 14, "q6_K", 256, 210, true}, {DType::Q8_K, 15, "q8_K", 256, 292, true},
    {DType::BF16, 30, "bf16", 1, 2, true},
};

TEST(DType, TableMatchesGgml) {
  for (const Expected& e : kAll) {
    SCOPED_TRACE(e.name);
    const auto info = dtype_info(e.id);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->type, e.type);
    EXPECT_EQ(info->name, e.name);
    EXPECT_EQ(info->block_size, e.block_size);
    EXPECT_EQ(info->block_bytes, e.block_bytes);
    EXPECT_EQ(info->can_load, e.can_load);
    EXPECT_EQ(dtype_info(e.type).block_bytes, e.block_bytes);
  }
}

TEST(DType, UnknownRawIdsAreNullopt) {
  for (uint32_t id : {4u, 5u, 16u, 17u, 29u, 31u, 39u, 1000u, 0xffffffffu}) {
    EXPECT_FALSE(dtype_info(id).has_value()) << id;
  }
  EXPECT_THROW(dtype_info(static_cast<DType>(4)), std::invalid_argument);
}

TEST(DType, NameRoundTrip) {
  for (const Expected& e : kAll) {
    EXPECT_EQ(dtype_name(e.type), e.name);
    EXPECT_EQ(dtype_from_name(e.name), e.type);
  }
  EXPECT_EQ(dtype_from_name("Q4_K"), DType::Q4_K);
  EXPECT_EQ(dtype_from_name("q6_k"), DType::Q6_K);
  EXPECT_EQ(dtype_from_name("BF16"), DType::BF16);
  EXPECT_FALSE(dtype_from_name("").has_value());
  EXPECT_FALSE(dtype_from_name("q4").has_value());
  EXPECT_FALSE(dtype_from_name("q4_0 ").has_value());
  EXPECT_FALSE(dtype_from_name("iq4_nl").has_value());
}

TEST(DType, RowBytes) {
  EXPECT_EQ(row_bytes(DType::F32, 0), 0u);
  EXPECT_EQ(row_bytes(DType::F32, 7), 28u);
  EXPECT_EQ(row_bytes(DType::F16, 7), 14u);
  EXPECT_EQ(row_bytes(DType::BF16, 3), 6u);
  EXPECT_EQ(row_bytes(DType::Q4_0, 64), 36u);
  EXPECT_EQ(row_bytes(DType::Q8_0, 4096), 128u * 34u);
  EXPECT_EQ(row_bytes(DType::Q4_K, 512), 288u);
  EXPECT_EQ(row_bytes(DType::Q6_K, 4096), 16u * 210u);
  EXPECT_EQ(row_bytes(DType::Q2_K, 256), 84u);  // known geometry even though we cannot decode it
}

TEST(DType, RowBytesRejectsPartialBlocks) {
  EXPECT_THROW(row_bytes(DType::Q4_0, 33), std::invalid_argument);
  EXPECT_THROW(row_bytes(DType::Q8_0, 16), std::invalid_argument);
  EXPECT_THROW(row_bytes(DType::Q4_K, 128), std::invalid_argument);
  EXPECT_THROW(row_bytes(DType::F32, -1), std::invalid_argument);
}

float f(uint32_t bits) { return std::bit_cast<float>(bits); }

TEST(Fp16, KnownValues) {
  EXPECT_EQ(f32_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_fp16(-2.0f), 0xc000);
  EXPECT_EQ(f32_to_fp16(0.5f), 0x3800);
  EXPECT_EQ(f32_to_fp16(65504.0f), 0x7bff);  // largest finite half
  EXPECT_EQ(f32_to_fp16(0.0f), 0x0000);
  EXPECT_EQ(f32_to_fp16(-0.0f), 0x8000);
  EXPECT_EQ(fp16_to_f32(0x3c00), 1.0f);
  EXPECT_EQ(fp16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(fp16_to_f32(0x7bff), 65504.0f);
  EXPECT_EQ(fp16_to_f32(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::signbit(fp16_to_f32(0x8000)));
}

TEST(Fp16, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 (0x3c00, even) and 1 + 2^-10 (0x3c01).
  EXPECT_EQ(f32_to_fp16(1.0f + 0x1p-11f), 0x3c00);
  // 1 + 3*2^-11 is halfway between 0x3c01 and 0x3c02 (even).
  EXPECT_EQ(f32_to_fp16(1.0f + 0x3p-11f), 0x3c02);
  // Just above the halfway point rounds up.
  EXPECT_EQ(f32_to_fp16(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
  EXPECT_EQ(f32_to_fp16(-(1.0f + 0x1p-11f + 0x1p-20f)), 0xbc01);
  // Mantissa carry into the exponent: just under 2 rounds to 2.
  EXPECT_EQ(f32_to_fp16(std::nextafter(2.0f, 0.0f)), 0x4000);
}

TEST(Fp16, OverflowInfinityAndNaN) {
  EXPECT_EQ(f32_to_fp16(65519.99f), 0x7bff);  // below the halfway point to 65536
  EXPECT_EQ(f32_to_fp16(65520.0f), 0x7c00);   // halfway ties to "even" = inf
  EXPECT_EQ(f32_to_fp16(1e6f), 0x7c00);
  EXPECT_EQ(f32_to_fp16(-FLT_MAX), 0xfc00);
  EXPECT_EQ(f32_to_fp16(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(f32_to_fp16(-std::numeric_limits<float>::infinity()), 0xfc00);
  const uint16_t nan = f32_to_fp16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_NE(f32_to_fp16(f(0x7f800001u)) & 0x03ff, 0);  // a NaN whose payload sits below bit 13 stays NaN
  EXPECT_EQ(f32_to_fp16(f(0xffc00000u)) & 0x8000, 0x8000);  // sign of NaN kept
  EXPECT_EQ(fp16_to_f32(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(fp16_to_f32(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(fp16_to_f32(0x7e00)));
  EXPECT_TRUE(std::isnan(fp16_to_f32(0x7c01)));
}

TEST(Fp16, Subnormals) {
  EXPECT_EQ(fp16_to_f32(0x0001), 0x1p-24f);              // smallest subnormal
  EXPECT_EQ(fp16_to_f32(0x03ff), 1023.0f * 0x1p-24f);    // largest subnormal
  EXPECT_EQ(fp16_to_f32(0x0400), 0x1p-14f);              // smallest normal
  EXPECT_EQ(fp16_to_f32(0x8001), -0x1p-24f);
  EXPECT_EQ(f32_to_fp16(0x1p-24f), 0x0001);
  EXPECT_EQ(f32_to_fp16(0x1p-25f), 0x0000);                          // tie: to even (zero)
  EXPECT_EQ(f32_to_fp16(std::nextafter(0x1p-25f, 1.0f)), 0x0001);  // just above the tie
  EXPECT_EQ(f32_to_fp16(0x3p-25f), 0x0002);                          // 1.5 ulp: tie to even (2)
  EXPECT_EQ(f32_to_fp16(0x5p-25f), 0x0002);                          // 2.5 ulp: tie to even (2)
  EXPECT_EQ(f32_to_fp16(1023.5f * 0x1p-24f), 0x0400);               // tie rounds up into the normals
  EXPECT_EQ(f32_to_fp16(1022.5f * 0x1p-24f), 0x03fe);
  EXPECT_EQ(f32_to_fp16(0x1p-30f), 0x0000);
  EXPECT_EQ(f32_to_fp16(-0x1p-30f), 0x8000);
  EXPECT_EQ(f32_to_fp16(f(0x00000001u)), 0x0000);  // f32 subnormal
}

TEST(Fp16, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float x = fp16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(x)) {
      EXPECT_EQ(h & 0x7c00, 0x7c00u);
      continue;
    }
    ASSERT_EQ(f32_to_fp16(x), h) << std::hex << h;
  }
}

TEST(Fp16, RandomFloatsRoundToTheNearestHalf) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> mag(-26.0f, 15.9f);  // up to ~61000, below the overflow
  for (int i = 0; i < 200000; ++i) {
    const float x = std::exp2(mag(rng)) * ((i & 1) ? -1.0f : 1.0f);
    const uint16_t h = f32_to_fp16(x);
    const double err = std::fabs(static_cast<double>(fp16_to_f32(h)) - x);
    // Neither neighbour (same sign, one ulp up or down) is strictly closer.
    for (int step : {-1, 1}) {
      const uint16_t n = static_cast<uint16_t>(h + step);
      if ((n & 0x7fff) >= 0x7c00 || (n & 0x8000) != (h & 0x8000)) continue;
      ASSERT_LE(err, std::fabs(static_cast<double>(fp16_to_f32(n)) - x)) << x;
    }
  }
}

TEST(Bf16, KnownValuesAndRounding) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16(-1.5f), 0xbfc0);
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xc040), -3.0f);
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);               // tie to even (down)
  EXPECT_EQ(f32_to_bf16(1.0f + 0x3p-8f), 0x3f82);               // tie to even (up)
  EXPECT_EQ(f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);    // above the tie
  EXPECT_EQ(f32_to_bf16(f(0x00010000u)), 0x0001);               // subnormals are just truncated bits
  EXPECT_EQ(f32_to_bf16(f(0x00008000u)), 0x0000);               // subnormal tie to even
  EXPECT_EQ(f32_to_bf16(f(0x00018000u)), 0x0002);
}

TEST(Bf16, OverflowInfinityAndNaN) {
  EXPECT_EQ(f32_to_bf16(FLT_MAX), 0x7f80);  // beyond the largest bf16 plus half an ulp: inf
  EXPECT_EQ(f32_to_bf16(-FLT_MAX), 0xff80);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(f(0x7f800001u)))));  // payload only in dropped bits
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(f(0xff800001u)))));
  EXPECT_EQ(bf16_to_f32(0x7f80), std::numeric_limits<float>::infinity());
}

TEST(Bf16, EveryBf16RoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float x = bf16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(x)) continue;
    ASSERT_EQ(f32_to_bf16(x), h) << std::hex << h;
  }
}

}  // namespace
}  // namespace inferscope
