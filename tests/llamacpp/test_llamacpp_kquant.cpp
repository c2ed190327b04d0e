// Our K-quant writers against ggml's reference ones (what llama-quantize runs without an importance
// matrix), through tests/llamacpp/ggml_quantize.cpp over libggml-base: on the same rows, shaped like
// weights (gaussian, and gaussian with a few values 10x larger), the round trip's RMSE must be within 1%
// of ggml's. The searches are the same, so the blocks come out identical but for float rounding in the
// searches' sums (observed: all of them); the test records how many.
// Both sides' blocks are read back with our dequantize_row: the layouts are ggml's.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/quantize.h"
#include "tests/llamacpp/not_built.h"
#include "tests/support/quant_error.h"

namespace inferscope::test {
namespace {

constexpr int64_t kCols = 4096, kRows = 32;  // a hidden dimension's rows
constexpr double kTolerance = 1.01;

struct Case {
  std::string name;
  DType type;
  int outlier_every;  // 0: plain gaussian
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (DType t : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    out.push_back({std::string(dtype_name(t)) + "_gaussian", t, 0});
    out.push_back({std::string(dtype_name(t)) + "_outliers", t, 100});
  }
  return out;
}

// ggml's blocks for x, as rows of kCols.
std::vector<uint8_t> ggml_blocks(DType type, const std::vector<float>& x, const std::string& tag) {
  const std::string in = ::testing::TempDir() + "/kquant-" + tag + ".f32", out = in + ".ggml";
  std::ofstream(in, std::ios::binary)
      .write(reinterpret_cast<const char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
  // appended piece by piece: GCC 12 reports a false -Wrestrict for the chain of operator+ here
  std::string command = GGML_QUANTIZE;
  for (const std::string& arg : {std::to_string(static_cast<uint32_t>(type)), std::to_string(kCols), in, out})
    command += " " + arg;
  if (std::system(command.c_str()) != 0) throw std::runtime_error(command + " failed");
  std::ifstream file(out, std::ios::binary);
  std::vector<uint8_t> blocks((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::remove(in.c_str());
  std::remove(out.c_str());
  return blocks;
}

std::vector<float> dequantized(DType type, const std::vector<uint8_t>& blocks, int64_t n) {
  std::vector<float> y(static_cast<size_t>(n));
  dequantize_row(type, blocks.data(), y.data(), n);
  return y;
}

class LlamaCppKQuant : public ::testing::TestWithParam<Case> {};

TEST_P(LlamaCppKQuant, RoundTripErrorWithinOnePercentOfGgml) {
  ASSERT_STRNE(GGML_QUANTIZE, "") << kLlamaCppNotBuilt;
  const Case& c = GetParam();
  const int64_t n = kCols * kRows;
  const std::vector<float> x = gaussian_row(n, 17, 0.02f, c.outlier_every);
  const size_t bytes = row_bytes(c.type, n);
  const std::vector<uint8_t> theirs = ggml_blocks(c.type, x, c.name);
  ASSERT_EQ(theirs.size(), bytes);
  std::vector<uint8_t> ours(bytes);
  quantize_row(c.type, x.data(), ours.data(), n);
  const double ours_rmse = rmse(x, dequantized(c.type, ours, n));
  const double theirs_rmse = rmse(x, dequantized(c.type, theirs, n));
  const size_t block_bytes = dtype_info(c.type).block_bytes;
  int identical = 0;
  for (size_t b = 0; b < bytes; b += block_bytes) identical += std::memcmp(&ours[b], &theirs[b], block_bytes) == 0;
  RecordProperty("ours_rmse", (::testing::Message() << std::setprecision(7) << ours_rmse).GetString());
  RecordProperty("ggml_rmse", (::testing::Message() << std::setprecision(7) << theirs_rmse).GetString());
  RecordProperty("identical_blocks", identical);
  ASSERT_GT(theirs_rmse, 0.0);
  EXPECT_LT(theirs_rmse, 0.1 * rmse(x, std::vector<float>(x.size(), 0.0f))) << "ggml's blocks do not decode to x";
  EXPECT_LE(ours_rmse, kTolerance * theirs_rmse) << "ours " << ours_rmse << ", ggml " << theirs_rmse;
}

INSTANTIATE_TEST_SUITE_P(Types, LlamaCppKQuant, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& param) { return param.param.name; });

}  // namespace
}  // namespace inferscope::test
