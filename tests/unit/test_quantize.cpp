// Reference (de)quantization: hand-built blocks decode to hand-computed values, hand-picked inputs
// encode to hand-computed bytes, and random rows round-trip within each format's error bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/format/quant_blocks.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/quantize_k.h"
#include "tests/support/quant_error.h"

namespace inferscope {
namespace {

template <class Block>
std::vector<float> dequant(DType type, const Block* blocks, int n_blocks) {
  const auto n = static_cast<int64_t>(n_blocks * dtype_info(type).block_size);
  std::vector<float> out(static_cast<size_t>(n), -12345.0f);  // poisoned
  dequantize_row(type, blocks, out.data(), n);
  return out;
}

void expect_floats(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "element " << i;
}

// ---------------------------------------------------------------- dequantization of hand-built blocks

TEST(Dequantize, PlainFloats) {
  const float f32[3] = {1.5f, -0.0f, 3e-40f};
  std::vector<float> out(3);
  dequantize_row(DType::F32, f32, out.data(), 3);
  expect_floats(out, {1.5f, -0.0f, 3e-40f});
  const uint16_t f16[4] = {0x3c00, 0xc500, 0x0001, 0x7bff};  // 1, -5, 2^-24, 65504
  out.resize(4);
  dequantize_row(DType::F16, f16, out.data(), 4);
  expect_floats(out, {1.0f, -5.0f, 0x1p-24f, 65504.0f});
  const uint16_t bf16[4] = {0x3f80, 0xc040, 0x4120, 0x0000};  // 1, -3, 10, 0
  dequantize_row(DType::BF16, bf16, out.data(), 4);
  expect_floats(out, {1.0f, -3.0f, 10.0f, 0.0f});
}

TEST(Dequantize, Q8_0) {
  BlockQ8_0 b[2] = {};
  b[0].d = 0x3800;  // 0.5
  for (int j = 0; j < 32; ++j) b[0].qs[j] = static_cast<int8_t>(j - 16);
  b[0].qs[0] = -128;
  b[0].qs[31] = 127;
  b[1].d = 0xc000;  // -2
  for (int j = 0; j < 32; ++j) b[1].qs[j] = 3;
  std::vector<float> want(64, -6.0f);
  for (int j = 0; j < 32; ++j) want[j] = static_cast<float>(j - 16) * 0.5f;
  want[0] = -64.0f;
  want[31] = 63.5f;
  expect_floats(dequant(DType::Q8_0, b, 2), want);
}

TEST(Dequantize, Q8_1IgnoresTheSum) {
  BlockQ8_1 b = {};
  b.d = 0x3400;  // 0.25
  b.s = 0x7bff;  // not used for dequantization
  for (int j = 0; j < 32; ++j) b.qs[j] = static_cast<int8_t>(2 * j - 31);
  std::vector<float> want(32);
  for (int j = 0; j < 32; ++j) want[j] = static_cast<float>(2 * j - 31) * 0.25f;
  expect_floats(dequant(DType::Q8_1, &b, 1), want);
}

TEST(Dequantize, Q4_0) {
  BlockQ4_0 b = {};
  b.d = 0x4000;  // 2
  std::memset(b.qs, 0x88, sizeof(b.qs));  // q = 8 -> 0
  b.qs[0] = 0xf0;  // element 0: q=0 -> -16; element 16: q=15 -> 14
  b.qs[1] = 0x1a;  // element 1: q=10 -> 4;  element 17: q=1 -> -14
  std::vector<float> want(32, 0.0f);
  want[0] = -16.0f;
  want[16] = 14.0f;
  want[1] = 4.0f;
  want[17] = -14.0f;
  expect_floats(dequant(DType::Q4_0, &b, 1), want);
}

TEST(Dequantize, Q4_1) {
  BlockQ4_1 b = {};
  b.d = 0x3800;  // 0.5
  b.m = 0xbc00;  // -1
  b.qs[0] = 0x3a;   // element 0: 10*0.5-1 = 4;    element 16: 3*0.5-1 = 0.5
  b.qs[15] = 0xf1;  // element 15: 1*0.5-1 = -0.5; element 31: 15*0.5-1 = 6.5
  std::vector<float> want(32, -1.0f);
  want[0] = 4.0f;
  want[16] = 0.5f;
  want[15] = -0.5f;
  want[31] = 6.5f;
  expect_floats(dequant(DType::Q4_1, &b, 1), want);
}

TEST(Dequantize, Q5_0HighBits) {
  BlockQ5_0 b = {};
  b.d = 0x3c00;  // 1
  // qh as a little-endian uint32 with bits 0, 17 and 31 set.
  b.qh[0] = 0x01;
  b.qh[2] = 0x02;
  b.qh[3] = 0x80;
  b.qs[0] = 0x21;   // element 0: (1|16)-16 = 1;   element 16: 2-16 = -14 (bit 16 clear)
  b.qs[1] = 0x43;   // element 1: 3-16 = -13;      element 17: (4|16)-16 = 4
  b.qs[15] = 0x50;  // element 15: 0-16 = -16;     element 31: (5|16)-16 = 5
  std::vector<float> want(32, -16.0f);
  want[0] = 1.0f;
  want[16] = -14.0f;
  want[1] = -13.0f;
  want[17] = 4.0f;
  want[31] = 5.0f;
  expect_floats(dequant(DType::Q5_0, &b, 1), want);
}

TEST(Dequantize, Q5_1HighBits) {
  BlockQ5_1 b = {};
  b.d = 0x3800;  // 0.5
  b.m = 0x4000;  // 2
  b.qh[0] = 0x08;  // bit 3
  b.qh[2] = 0x10;  // bit 20
  b.qs[3] = 0xf7;  // element 3: (7|16)*0.5+2 = 13.5; element 19: 15*0.5+2 = 9.5
  b.qs[4] = 0x0f;  // element 4: 15*0.5+2 = 9.5;      element 20: (0|16)*0.5+2 = 10
  std::vector<float> want(32, 2.0f);
  want[3] = 13.5f;
  want[19] = 9.5f;
  want[4] = 9.5f;
  want[20] = 10.0f;
  expect_floats(dequant(DType::Q5_1, &b, 1), want);
}

// Sub-block scales {1,2,3,63,17,40,5,33} and mins {0,1,2,3,50,4,63,7}, packed by hand:
// bytes 0-3 = scale_j | (scale_{j+4} >> 4) << 6, bytes 4-7 = min_j | (min_{j+4} >> 4) << 6,
// bytes 8-11 = (scale_{j+4} & 15) | (min_{j+4} & 15) << 4.
constexpr uint8_t kKScales[12] = {0x41, 0x82, 0x03, 0xbf, 0xc0, 0x01, 0xc2, 0x03, 0x21, 0x48, 0xf5, 0x71};
// -dmin * min_j with dmin = 0.5: the value of a zero quant in sub-block j.
constexpr float kKBaseline[8] = {0.0f, -0.5f, -1.0f, -1.5f, -25.0f, -2.0f, -31.5f, -3.5f};

std::vector<float> k_baseline() {
  std::vector<float> want(256);
  for (int i = 0; i < 256; ++i) want[i] = kKBaseline[i / 32];
  return want;
}

TEST(Dequantize, Q4_KScalePacking) {
  BlockQ4_K b = {};
  b.d = 0x3c00;     // 1
  b.dmin = 0x3800;  // 0.5
  std::memcpy(b.scales, kKScales, sizeof(kKScales));
  b.qs[0] = 0xa3;    // element 0 (sub 0, q=3): 1*3 - 0 = 3;        element 32 (sub 1, q=10): 2*10 - 0.5 = 19.5
  b.qs[33] = 0x5f;   // element 65 (sub 2, q=15): 3*15 - 1 = 44;    element 97 (sub 3, q=5): 63*5 - 1.5 = 313.5
  b.qs[64] = 0x12;   // element 128 (sub 4, q=2): 17*2 - 25 = 9;    element 160 (sub 5, q=1): 40 - 2 = 38
  b.qs[127] = 0xf1;  // element 223 (sub 6, q=1): 5 - 31.5 = -26.5; element 255 (sub 7, q=15): 33*15 - 3.5 = 491.5
  std::vector<float> want = k_baseline();
  want[0] = 3.0f;
  want[32] = 19.5f;
  want[65] = 44.0f;
  want[97] = 313.5f;
  want[128] = 9.0f;
  want[160] = 38.0f;
  want[223] = -26.5f;
  want[255] = 491.5f;
  expect_floats(dequant(DType::Q4_K, &b, 1), want);
}

TEST(Dequantize, Q4_KScaleHelper) {
  const uint8_t scales[8] = {1, 2, 3, 63, 17, 40, 5, 33}, mins[8] = {0, 1, 2, 3, 50, 4, 63, 7};
  for (int j = 0; j < 8; ++j) {
    uint8_t sc = 0, mn = 0;
    k_scale_min(j, kKScales, sc, mn);
    EXPECT_EQ(sc, scales[j]) << j;
    EXPECT_EQ(mn, mins[j]) << j;
  }
}

TEST(Dequantize, Q5_KFifthBit) {
  BlockQ5_K b = {};
  b.d = 0x3c00;     // 1
  b.dmin = 0x3800;  // 0.5
  std::memcpy(b.scales, kKScales, sizeof(kKScales));
  // Bit j of qh[l] is the fifth bit of element 32*j + l.
  b.qh[0] = 0x03;   // elements 0 and 32
  b.qh[1] = 0x04;   // element 65
  b.qh[5] = 0x10;   // element 133
  b.qh[31] = 0x80;  // element 255
  b.qs[0] = 0xa3;
  b.qs[33] = 0x5f;
  b.qs[127] = 0xf1;
  std::vector<float> want = k_baseline();
  want[0] = 19.0f;     // q = 3+16:  1*19
  want[32] = 51.5f;    // q = 10+16: 2*26 - 0.5
  want[65] = 92.0f;    // q = 15+16: 3*31 - 1
  want[97] = 313.5f;   // q = 5:     63*5 - 1.5 (bit 3 of qh[1] clear)
  want[133] = 247.0f;  // q = 0+16:  17*16 - 25
  want[223] = -26.5f;  // q = 1:     5 - 31.5
  want[255] = 1019.5f; // q = 15+16: 33*31 - 3.5
  expect_floats(dequant(DType::Q5_K, &b, 1), want);
}

TEST(Dequantize, Q6_KLowAndHighBits) {
  BlockQ6_K b = {};
  b.d = 0x3800;  // 0.5
  const int8_t scales[16] = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -16};
  std::memcpy(b.scales, scales, sizeof(scales));
  // With every q = 0, x = 0.5 * scale * (0 - 32) = -16 * scale.
  constexpr float kBase[16] = {-16, 32, -48, 64, -80, 96, -112, 128, -144, 160, -176, 192, -208, 224, -240, 256};
  std::vector<float> want(256);
  for (int i = 0; i < 256; ++i) want[i] = kBase[i / 16];
  // First half (h=0), l=0: ql[0] gives k=0 (low nibble 1) and k=2 (high nibble 2); qh[0]=0b11'10'01'00.
  b.ql[0] = 0x21;
  b.qh[0] = 0xe4;
  want[0] = -15.5f;   // q = 1:       0.5*1*(1-32)
  want[32] = -24.0f;  // q = 0|1<<4:  0.5*3*(16-32)
  want[64] = 5.0f;    // q = 2|2<<4:  0.5*5*(34-32)
  want[96] = 56.0f;   // q = 0|3<<4:  0.5*7*(48-32)
  // ql[49] = ql[32+17] holds k=1 (low nibble 0) and k=3 (high nibble 15) for l=17.
  b.ql[49] = 0xf0;
  want[113] = 68.0f;  // q = 15: 0.5*-8*(15-32)
  // Second half (h=1), l=5: ql[64+5] low nibble 12 with qh[32+5] bits 0-1 = 1.
  b.ql[69] = 0x0c;
  b.qh[37] = 0x01;
  want[133] = -18.0f;  // q = 12|1<<4 = 28: 0.5*9*(28-32)
  // Second half, l=31: ql[64+32+31] = 0x77 (k=1 and k=3 nibbles 7), qh[32+31] all ones.
  b.ql[127] = 0x77;
  b.qh[63] = 0xff;
  want[159] = -80.0f;   // k=0: q = 0|3<<4 = 48: 0.5*-10*16
  want[191] = -138.0f;  // k=1: q = 7|3<<4 = 55: 0.5*-12*23
  want[223] = -112.0f;  // k=2: q = 48:           0.5*-14*16
  want[255] = -184.0f;  // k=3: q = 55:           0.5*-16*23
  expect_floats(dequant(DType::Q6_K, &b, 1), want);
}

TEST(Dequantize, Q8_K) {
  BlockQ8_K b = {};
  b.d = -0.25f;
  for (int j = 0; j < 256; ++j) b.qs[j] = static_cast<int8_t>(j - 128);
  b.bsums[0] = 999;  // not used for dequantization
  std::vector<float> want(256);
  for (int j = 0; j < 256; ++j) want[j] = static_cast<float>(j - 128) * -0.25f;
  expect_floats(dequant(DType::Q8_K, &b, 1), want);
}

TEST(Dequantize, RejectsUnsupportedAndPartialRows) {
  std::vector<uint8_t> buf(1024);
  std::vector<float> out(512);
  EXPECT_THROW(dequantize_row(DType::Q2_K, buf.data(), out.data(), 256), std::invalid_argument);
  EXPECT_THROW(dequantize_row(DType::Q3_K, buf.data(), out.data(), 256), std::invalid_argument);
  EXPECT_THROW(dequantize_row(DType::Q4_0, buf.data(), out.data(), 48), std::invalid_argument);
  EXPECT_THROW(dequantize_row(DType::Q6_K, buf.data(), out.data(), 32), std::invalid_argument);
}

// ---------------------------------------------------------------- quantization of hand-picked inputs

template <class Block>
Block quant_one(DType type, const std::vector<float>& x) {
  Block b;
  std::memset(&b, 0xcd, sizeof(b));  // poisoned
  quantize_row(type, x.data(), &b, static_cast<int64_t>(x.size()));
  return b;
}

TEST(Quantize, Q8_0RoundsHalfAwayFromZero) {
  std::vector<float> x(32, 1.0f);
  const float head[6] = {127.0f, -127.0f, 2.5f, -2.5f, 0.49f, 3.51f};  // amax 127: d = 1
  std::copy(head, head + 6, x.begin());
  const auto b = quant_one<BlockQ8_0>(DType::Q8_0, x);
  EXPECT_EQ(b.d, 0x3c00);
  const int8_t want[6] = {127, -127, 3, -3, 0, 4};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(b.qs[j], want[j]) << j;
  for (int j = 6; j < 32; ++j) EXPECT_EQ(b.qs[j], 1) << j;
  // Q8_1 is the same plus s = d * sum(q) = 1 * (0 + 0 + 4 + 26) = 30.
  const auto b1 = quant_one<BlockQ8_1>(DType::Q8_1, x);
  EXPECT_EQ(b1.d, 0x3c00);
  EXPECT_EQ(b1.s, 0x4f80);  // 30 as a half
  EXPECT_EQ(std::memcmp(b1.qs, b.qs, 32), 0);
}

TEST(Quantize, Q4_0SignedMaxAndClamp) {
  std::vector<float> x(32, 1.0f);
  // The first largest-magnitude element is -8, so d = -8/-8 = 1 and q = floor(x + 8.5) capped at 15.
  const float head[7] = {-8.0f, 7.0f, 8.0f, 0.5f, -0.5f, 0.49f, 3.2f};
  std::copy(head, head + 7, x.begin());
  const auto b = quant_one<BlockQ4_0>(DType::Q4_0, x);
  EXPECT_EQ(b.d, 0x3c00);
  // q = {0, 15, 15 (16 capped), 9, 8, 8, 11}, the rest 9; byte j = q_j | q_{j+16} << 4.
  const uint8_t want[16] = {0x90, 0x9f, 0x9f, 0x99, 0x98, 0x98, 0x9b, 0x99,
                            0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99};
  EXPECT_EQ(std::memcmp(b.qs, want, 16), 0);
}

TEST(Quantize, Q4_1MinAndScale) {
  std::vector<float> x(32, 5.0f);
  const float head[5] = {1.0f, 16.0f, 2.5f, 3.49f, 10.0f};  // min 1, max 16: d = 1, m = 1
  std::copy(head, head + 5, x.begin());
  const auto b = quant_one<BlockQ4_1>(DType::Q4_1, x);
  EXPECT_EQ(b.d, 0x3c00);
  EXPECT_EQ(b.m, 0x3c00);
  // q = floor(x - 1 + 0.5) = {0, 15, 2, 2, 9}, the rest 4.
  const uint8_t want[16] = {0x40, 0x4f, 0x42, 0x42, 0x49, 0x44, 0x44, 0x44,
                            0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44};
  EXPECT_EQ(std::memcmp(b.qs, want, 16), 0);
}

TEST(Quantize, Q5_0HighBitsAndClamp) {
  std::vector<float> x(32, 1.0f);
  const float head[6] = {-16.0f, 15.0f, 16.0f, 0.5f, -0.5f, 14.9f};  // d = -16/-16 = 1
  std::copy(head, head + 6, x.begin());
  const auto b = quant_one<BlockQ5_0>(DType::Q5_0, x);
  EXPECT_EQ(b.d, 0x3c00);
  // q = floor(x + 16.5) capped at 31 = {0, 31, 31, 17, 16, 31}, the rest 17: every fifth bit but bit 0.
  const uint8_t want_qh[4] = {0xfe, 0xff, 0xff, 0xff};
  const uint8_t want_qs[16] = {0x10, 0x1f, 0x1f, 0x11, 0x10, 0x1f, 0x11, 0x11,
                               0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11};
  EXPECT_EQ(std::memcmp(b.qh, want_qh, 4), 0);
  EXPECT_EQ(std::memcmp(b.qs, want_qs, 16), 0);
}

TEST(Quantize, Q5_1HighBits) {
  std::vector<float> x(32, 0.0f);
  const float head[5] = {-1.0f, 30.0f, 14.5f, 15.0f, 6.0f};  // min -1, max 30: d = 1, m = -1
  std::copy(head, head + 5, x.begin());
  const auto b = quant_one<BlockQ5_1>(DType::Q5_1, x);
  EXPECT_EQ(b.d, 0x3c00);
  EXPECT_EQ(b.m, 0xbc00);
  // q = floor(x + 1 + 0.5) = {0, 31, 16, 16, 7}, the rest 1: fifth bits 1, 2, 3.
  const uint8_t want_qh[4] = {0x0e, 0x00, 0x00, 0x00};
  const uint8_t want_qs[16] = {0x10, 0x1f, 0x10, 0x10, 0x17, 0x11, 0x11, 0x11,
                               0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11};
  EXPECT_EQ(std::memcmp(b.qh, want_qh, 4), 0);
  EXPECT_EQ(std::memcmp(b.qs, want_qs, 16), 0);
}

TEST(Quantize, Q8_KRoundsHalfToEvenAndSumsGroups) {
  std::vector<float> x(256, 2.0f);
  const float head[6] = {254.0f, -254.0f, 5.0f, -5.0f, 3.0f, 1.0f};  // max 254: scale -127/254 = -0.5
  std::copy(head, head + 6, x.begin());
  const auto b = quant_one<BlockQ8_K>(DType::Q8_K, x);
  EXPECT_EQ(b.d, -2.0f);
  // q = nearbyint(-x/2) = {-127, 127, -2 (-2.5), 2, -2 (-1.5), 0 (-0.5)}, the rest -1.
  const int8_t want[6] = {-127, 127, -2, 2, -2, 0};
  for (int j = 0; j < 6; ++j) EXPECT_EQ(b.qs[j], want[j]) << j;
  for (int j = 6; j < 256; ++j) ASSERT_EQ(b.qs[j], -1) << j;
  EXPECT_EQ(b.bsums[0], -127 + 127 - 2 + 2 - 2 + 0 - 10);
  for (int g = 1; g < 16; ++g) EXPECT_EQ(b.bsums[g], -16) << g;
}

TEST(Quantize, ZeroBlocksStayZero) {
  const std::vector<float> z32(32, 0.0f), z256(256, 0.0f);
  std::vector<float> out(256, 1.0f);
  for (DType t : {DType::Q8_0, DType::Q8_1, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1}) {
    std::vector<uint8_t> buf(row_bytes(t, 32));
    quantize_row(t, z32.data(), buf.data(), 32);
    dequantize_row(t, buf.data(), out.data(), 32);
    for (int j = 0; j < 32; ++j) ASSERT_EQ(out[j], 0.0f) << dtype_name(t);
  }
  for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    std::vector<uint8_t> buf(row_bytes(t, 256));
    quantize_row(t, z256.data(), buf.data(), 256);
    dequantize_row(t, buf.data(), out.data(), 256);
    for (int j = 0; j < 256; ++j) ASSERT_EQ(out[j], 0.0f) << dtype_name(t);
  }
  const auto b = quant_one<BlockQ8_K>(DType::Q8_K, z256);
  EXPECT_EQ(b.d, 0.0f);
  for (int j = 0; j < 256; ++j) ASSERT_EQ(b.qs[j], 0);
  for (int g = 0; g < 16; ++g) ASSERT_EQ(b.bsums[g], 0);
}

TEST(Quantize, ConstantBlockKeepsItsValueInQ4_1) {
  const std::vector<float> x(32, 0.75f);  // max == min: d = 0, every element is m
  std::vector<float> out(32);
  std::vector<uint8_t> buf(row_bytes(DType::Q4_1, 32));
  quantize_row(DType::Q4_1, x.data(), buf.data(), 32);
  dequantize_row(DType::Q4_1, buf.data(), out.data(), 32);
  for (float v : out) EXPECT_EQ(v, 0.75f);
}

// A constant block: every sub-block fits it exactly (c = scale * nmax with no min for c > 0, a zero
// scale and min -c for c < 0; Q6_K's c = scale * -32); all sub-blocks share the largest scale, so the
// only error left is d's (or dmin's) rounding to f16, 2^-11 relative, plus float rounding. (|c| >= 0.25
// keeps the smallest, Q6_K's d = |c|/4096, a normal f16; ScaledRows covers subnormal scales.)
TEST(Quantize, KQuantConstantBlocksKeepTheirValue) {
  for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    for (float c : {0.75f, -0.75f, 3.3f, -20.0f}) {
      const std::vector<float> x(512, c);
      std::vector<float> out(512);
      std::vector<uint8_t> buf(row_bytes(t, 512));
      quantize_row(t, x.data(), buf.data(), 512);
      dequantize_row(t, buf.data(), out.data(), 512);
      for (int j = 0; j < 512; ++j) {
        ASSERT_NEAR(out[j], c, std::fabs(c) * (0x1p-11f + 1e-6f)) << dtype_name(t) << " " << c << " element " << j;
      }
    }
  }
}

TEST(Quantize, RejectsUnsupportedAndPartialRows) {
  std::vector<float> x(512, 1.0f);
  std::vector<uint8_t> buf(4096);
  for (DType t : {DType::Q2_K, DType::Q3_K}) {
    EXPECT_FALSE(can_quantize(t));
    EXPECT_THROW(quantize_row(t, x.data(), buf.data(), 256), std::invalid_argument);
  }
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q8_1, DType::Q4_0, DType::Q4_1,
                  DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q8_K}) {
    EXPECT_TRUE(can_quantize(t)) << dtype_name(t);
  }
  EXPECT_THROW(quantize_row(DType::Q8_0, x.data(), buf.data(), 40), std::invalid_argument);
  for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q8_K}) {
    for (int64_t n : {32, 128, 300}) EXPECT_THROW(quantize_row(t, x.data(), buf.data(), n), std::invalid_argument) << n;
  }
}

// ---------------------------------------------------------------- random round trips

constexpr int kN = 1024;  // 32 blocks of 32, 4 super-blocks of 256

// Gaussian values around a per-block offset, one large outlier per 32, never exactly zero.
std::vector<float> random_row(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 31);
  std::vector<float> x(kN);
  for (int blk = 0; blk < kN / 32; ++blk) {
    const float offset = (blk % 3 == 0) ? 2.5f * normal(rng) : 0.0f;
    for (int j = 0; j < 32; ++j) {
      float v = offset + normal(rng);
      x[blk * 32 + j] = v != 0.0f ? v : 0.5f;
    }
    x[blk * 32 + pick(rng)] *= 25.0f;  // outlier
  }
  return x;
}

struct RoundTrip {
  std::vector<uint8_t> bytes;
  std::vector<float> y;
};

RoundTrip round_trip(DType type, const std::vector<float>& x) {
  RoundTrip r{std::vector<uint8_t>(row_bytes(type, kN)), std::vector<float>(kN, -12345.0f)};
  quantize_row(type, x.data(), r.bytes.data(), kN);
  dequantize_row(type, r.bytes.data(), r.y.data(), kN);
  return r;
}

float round_f16(float v) { return fp16_to_f32(f32_to_fp16(v)); }

float block_absmax(const float* x, int n) {
  float a = 0.0f;
  for (int j = 0; j < n; ++j) a = std::max(a, std::fabs(x[j]));
  return a;
}

class RandomRows : public ::testing::TestWithParam<uint32_t> {};

// Q8_0/Q8_1: d = amax/127; rounding to the grid costs d/2; storing d as f16 moves a q of up to 127
// by 127*|d - f16(d)|.
void check_q8(DType t, const std::vector<float>& x) {
  const auto r = round_trip(t, x);
  for (int blk = 0; blk < kN / 32; ++blk) {
    const float amax = block_absmax(&x[blk * 32], 32);
    const float d = amax / 127.0f;
    const float bound = 0.5f * d + 127.0f * std::fabs(d - round_f16(d)) + 1e-6f * amax;
    for (int j = blk * 32; j < blk * 32 + 32; ++j) {
      ASSERT_LE(std::fabs(r.y[j] - x[j]), bound) << dtype_name(t) << " element " << j;
    }
  }
}

TEST_P(RandomRows, Q8_0AndQ8_1WithinHalfAStep) {
  for (DType t : {DType::Q8_0, DType::Q8_1}) check_q8(t, random_row(GetParam()));
}

TEST_P(RandomRows, Q8_1SumIsDTimesSumOfQuants) {
  const auto x = random_row(GetParam());
  const auto r = round_trip(DType::Q8_1, x);
  for (int blk = 0; blk < kN / 32; ++blk) {
    BlockQ8_1 b;
    std::memcpy(&b, r.bytes.data() + blk * sizeof(BlockQ8_1), sizeof(b));
    int sum = 0;
    for (int8_t q : b.qs) sum += q;
    const float d = block_absmax(&x[blk * 32], 32) / 127.0f;
    EXPECT_EQ(b.s, f32_to_fp16(d * static_cast<float>(sum))) << blk;
    EXPECT_NEAR(fp16_to_f32(b.s), fp16_to_f32(b.d) * static_cast<float>(sum),
                2e-3f * std::fabs(fp16_to_f32(b.s)) + 1e-6f);
  }
}

TEST_P(RandomRows, Q8_KWithinHalfAStepWithExactGroupSums) {
  const auto x = random_row(GetParam());
  const auto r = round_trip(DType::Q8_K, x);
  for (int blk = 0; blk < kN / 256; ++blk) {
    BlockQ8_K b;
    std::memcpy(&b, r.bytes.data() + blk * sizeof(BlockQ8_K), sizeof(b));
    const float* xb = &x[blk * 256];
    const float amax = block_absmax(xb, 256);
    EXPECT_NEAR(std::fabs(b.d), amax / 127.0f, 1e-6f * amax);
    // The largest-magnitude element lands on -127 (ggml's scale is -127/max).
    const auto arg = std::max_element(xb, xb + 256, [](float a, float c) { return std::fabs(a) < std::fabs(c); });
    EXPECT_EQ(b.qs[arg - xb], -127);
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += b.qs[16 * g + j];
      EXPECT_EQ(b.bsums[g], sum) << "block " << blk << " group " << g;
    }
    for (int j = 0; j < 256; ++j) {
      ASSERT_LE(std::fabs(r.y[blk * 256 + j] - xb[j]), 0.5f * std::fabs(b.d) + 1e-6f * amax) << j;
    }
  }
}

// Q4_0/Q5_0: d = max/-half_range; |q - offset| <= half_range. Elements of the opposite sign to max
// that would need q = 2*half_range are capped one step short, so their error is up to a full step.
void check_symmetric(DType t, float half_range, const std::vector<float>& x) {
  const auto r = round_trip(t, x);
  for (int blk = 0; blk < kN / 32; ++blk) {
    const float* xb = &x[blk * 32];
    const auto arg = std::max_element(xb, xb + 32, [](float a, float c) { return std::fabs(a) < std::fabs(c); });
    const float d = *arg / -half_range;
    const float f16_err = half_range * std::fabs(d - round_f16(d)) + 1e-6f * std::fabs(*arg);
    for (int j = 0; j < 32; ++j) {
      const bool capped = xb[j] / d > half_range - 0.51f;
      const float bound = (capped ? 1.0f : 0.5f) * std::fabs(d) + f16_err;
      ASSERT_LE(std::fabs(r.y[blk * 32 + j] - xb[j]), bound) << dtype_name(t) << " element " << blk * 32 + j;
    }
  }
}

TEST_P(RandomRows, Q4_0WithinHalfAStep) { check_symmetric(DType::Q4_0, 8.0f, random_row(GetParam())); }
TEST_P(RandomRows, Q5_0WithinHalfAStep) { check_symmetric(DType::Q5_0, 16.0f, random_row(GetParam())); }

// Q4_1/Q5_1: d = (max-min)/levels, m = min; error d/2 plus the f16 rounding of d (times q) and of m.
void check_affine(DType t, float levels, const std::vector<float>& x) {
  const auto r = round_trip(t, x);
  for (int blk = 0; blk < kN / 32; ++blk) {
    const float* xb = &x[blk * 32];
    const auto [lo, hi] = std::minmax_element(xb, xb + 32);
    const float d = (*hi - *lo) / levels;
    const float bound = 0.5f * d + levels * std::fabs(d - round_f16(d)) + std::fabs(*lo - round_f16(*lo)) +
                        1e-6f * (std::fabs(*lo) + std::fabs(*hi));
    for (int j = 0; j < 32; ++j) {
      ASSERT_LE(std::fabs(r.y[blk * 32 + j] - xb[j]), bound) << dtype_name(t) << " element " << blk * 32 + j;
    }
  }
}

TEST_P(RandomRows, Q4_1WithinHalfAStep) { check_affine(DType::Q4_1, 15.0f, random_row(GetParam())); }
TEST_P(RandomRows, Q5_1WithinHalfAStep) { check_affine(DType::Q5_1, 31.0f, random_row(GetParam())); }

// The levels a K-quant sub-block can store: base + step * k for k < levels.
struct KGrid {
  float base;
  float step;
  int levels;
};

// Q4_K/Q5_K sub-block j: x = d * scale_j * q - dmin * min_j.
template <class Block>
KGrid affine_k_grid(const uint8_t* bytes, int j, int levels) {
  Block b;
  std::memcpy(&b, bytes, sizeof(b));
  uint8_t sc = 0, mn = 0;
  k_scale_min(j, b.scales, sc, mn);
  return {-fp16_to_f32(b.dmin) * mn, fp16_to_f32(b.d) * sc, levels};
}

// Sub-block j of the K-quant block at `bytes`, as the reader sees it.
KGrid k_grid(DType t, const uint8_t* bytes, int j) {
  if (t == DType::Q4_K) return affine_k_grid<BlockQ4_K>(bytes, j, 16);
  if (t == DType::Q5_K) return affine_k_grid<BlockQ5_K>(bytes, j, 32);
  BlockQ6_K b;  // x = d * scale_j * (q - 32)
  std::memcpy(&b, bytes, sizeof(b));
  const float step = fp16_to_f32(b.d) * b.scales[j];
  return {-32.0f * step, step, 64};
}

int k_sub_block(DType t) { return t == DType::Q6_K ? 16 : 32; }

// Each element is rounded to the nearest level of its sub-block's stored scales: within half a step
// of x inside the grid's span, and at the nearer end outside it (the clamp at the extremes).
void check_k(DType t, const std::vector<float>& x) {
  const auto r = round_trip(t, x);
  const size_t block_bytes = dtype_info(t).block_bytes;
  const int sub = k_sub_block(t);
  for (int e = 0; e < kN; ++e) {
    const KGrid g = k_grid(t, r.bytes.data() + (e / QK_K) * block_bytes, (e % QK_K) / sub);
    const float top = g.base + g.step * static_cast<float>(g.levels - 1);
    const float lo = std::min(g.base, top), hi = std::max(g.base, top);
    const float outside = std::max({0.0f, lo - x[e], x[e] - hi});
    const float bound = 0.5f * std::fabs(g.step) + outside + 1e-6f * (std::fabs(x[e]) + std::max(-lo, hi));
    ASSERT_LE(std::fabs(r.y[e] - x[e]), bound) << dtype_name(t) << " element " << e;
  }
}

TEST_P(RandomRows, KQuantsRoundToTheNearestStoredLevel) {
  for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) check_k(t, random_row(GetParam()));
}

TEST_P(RandomRows, FloatFormatsWithinHalfAnUlp) {
  const auto x = random_row(GetParam());
  const auto f32 = round_trip(DType::F32, x);
  const auto f16 = round_trip(DType::F16, x);
  const auto bf16 = round_trip(DType::BF16, x);
  for (int j = 0; j < kN; ++j) {
    ASSERT_EQ(f32.y[j], x[j]);
    ASSERT_LE(std::fabs(f16.y[j] - x[j]), std::fabs(x[j]) * 0x1p-11f) << j;   // 10 mantissa bits
    ASSERT_LE(std::fabs(bf16.y[j] - x[j]), std::fabs(x[j]) * 0x1p-8f) << j;   // 7 mantissa bits
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomRows, ::testing::Values(1u, 2u, 3u, 42u));

// The weight formats of the quantization levels at the magnitudes real tensors have (weights around
// 0.01..0.1, activations up to hundreds) and at scales whose f16 encoding is subnormal.
class ScaledRows : public ::testing::TestWithParam<float> {};

TEST_P(ScaledRows, WeightFormatsWithinTheirBounds) {
  std::vector<float> x = random_row(7);
  for (float& v : x) v *= GetParam();
  check_q8(DType::Q8_0, x);
  check_symmetric(DType::Q4_0, 8.0f, x);
  check_affine(DType::Q4_1, 15.0f, x);
  for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) check_k(t, x);
  const auto f16 = round_trip(DType::F16, x);
  for (int j = 0; j < kN; ++j) {
    // half an ulp of 10 mantissa bits, or half the smallest subnormal (2^-24) below the normal range
    ASSERT_LE(std::fabs(f16.y[j] - x[j]), std::max(std::fabs(x[j]) * 0x1p-11f, 0x1p-25f)) << j;
    ASSERT_NE(x[j], 0.0f);  // the data never holds exact zeros
  }
}

INSTANTIATE_TEST_SUITE_P(Magnitudes, ScaledRows, ::testing::Values(1e-6f, 1e-3f, 0.05f, 300.0f));

// ---------------------------------------------------------------- K-quant quality

double round_trip_rmse(DType t, const std::vector<float>& x) {
  const auto n = static_cast<int64_t>(x.size());
  std::vector<uint8_t> bytes(row_bytes(t, n));
  std::vector<float> y(x.size());
  quantize_row(t, x.data(), bytes.data(), n);
  dequantize_row(t, bytes.data(), y.data(), n);
  return test::rmse(x, y);
}

// More bits, less error; and Q4_K and Q5_K beat Q4_1 and Q5_1, which spend more bits per element (5 and 6
// against 4.5 and 5.5) on f16 scales and mins of min/max: the search outweighs the 6-bit scales.
TEST(KQuantQuality, ErrorShrinksWithBits) {
  for (int outlier_every : {0, 64}) {
    const std::vector<float> x = test::gaussian_row(64 * QK_K, 11, 0.02f, outlier_every);
    const double q4 = round_trip_rmse(DType::Q4_K, x), q5 = round_trip_rmse(DType::Q5_K, x),
                 q6 = round_trip_rmse(DType::Q6_K, x);
    SCOPED_TRACE(::testing::Message() << "outliers 1/" << outlier_every << ": Q4_K " << q4 << ", Q5_K " << q5
                                      << ", Q6_K " << q6);
    EXPECT_LT(q6, q5);
    EXPECT_LT(q5, q4);
    EXPECT_LT(q4, round_trip_rmse(DType::Q4_1, x));
    EXPECT_LT(q5, round_trip_rmse(DType::Q5_1, x));
  }
}

// The weighted squared error of x_i ~ scale * q_i - min with each q_i the nearest level in [0, nmax].
double nearest_level_error(const float* x, const float* w, int n, int nmax, const cpu::AffineFit& fit) {
  double error = 0.0;
  for (int i = 0; i < n; ++i) {
    const float q = fit.scale > 0.0f ? std::clamp(std::nearbyint((x[i] + fit.min) / fit.scale), 0.0f,
                                                  static_cast<float>(nmax))
                                     : 0.0f;
    const double diff = static_cast<double>(fit.scale) * q - fit.min - x[i];
    error += w[i] * diff * diff;
  }
  return error;
}

// The search keeps the min/max start unless a candidate does better, so on every sub-block its fit is
// no worse; over many sub-blocks of random_row (offsets, outliers) it is clearly better (observed 0.22x
// the start's error for Q4_K's grid, 0.48x for Q5_K's).
TEST(KQuantSearch, BeatsTheMinMaxStart) {
  const std::vector<float> x = random_row(5);
  for (auto [nmax, grid] : {std::pair{15, cpu::kQ4KGrid}, std::pair{31, cpu::kQ5KGrid}}) {
    double start_total = 0.0, search_total = 0.0;
    for (int j = 0; j < kN / 32; ++j) {
      const float* xs = &x[32 * j];
      float w[32];
      cpu::k_error_weights(xs, 32, w);
      const cpu::AffineFit start = cpu::fit_scale_min(xs, w, 32, nmax, cpu::kNoSearch);
      const cpu::AffineFit found = cpu::fit_scale_min(xs, w, 32, nmax, grid);
      EXPECT_GE(found.min, 0.0f);
      // The fit's own quants are one choice of levels, so the nearest levels do at least as well.
      const double start_error = nearest_level_error(xs, w, 32, nmax, start);
      const double found_error = nearest_level_error(xs, w, 32, nmax, found);
      EXPECT_LE(found_error, found.error * (1 + 1e-5)) << j;
      EXPECT_NEAR(start_error, start.error, 1e-5 * start.error) << j;
      EXPECT_LE(found.error, start.error) << "nmax " << nmax << " sub-block " << j;
      start_total += start_error;
      search_total += found_error;
    }
    EXPECT_LT(search_total, 0.75 * start_total) << "nmax " << nmax;
  }
}

}  // namespace
}  // namespace inferscope
