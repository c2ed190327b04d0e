// Weight quantization levels: names both ways, clear errors, the format each matrix gets, and the
// general.file_type values llama.cpp expects.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/quant/weight_quant.h"

namespace inferscope {
namespace {

TEST(WeightQuant, NamesRoundTrip) {
  for (WeightQuant l : {WeightQuant::Native, WeightQuant::F32, WeightQuant::F16, WeightQuant::Q8, WeightQuant::Q4,
                        WeightQuant::Q4_1}) {
    const auto parsed = weight_quant_from_name(weight_quant_name(l));
    ASSERT_TRUE(parsed.has_value()) << weight_quant_name(l);
    EXPECT_EQ(*parsed, l);
    EXPECT_EQ(parse_weight_quant(weight_quant_name(l)), l);
  }
  EXPECT_EQ(weight_quant_name(WeightQuant::Q4_1), "q4_1");
  EXPECT_EQ(weight_quant_names(), "native, f32, f16, q8, q4, q4_1");
}

TEST(WeightQuant, UnknownNameListsTheValidOnes) {
  EXPECT_FALSE(weight_quant_from_name("Q8").has_value());  // names are exact, lower case
  EXPECT_FALSE(weight_quant_from_name("").has_value());
  try {
    parse_weight_quant("q3");
    FAIL() << "q3 parsed";
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'q3'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("native, f32, f16, q8, q4, q4_1"), std::string::npos) << msg;
  }
}

TEST(WeightQuant, LevelFormats) {
  EXPECT_FALSE(weight_quant_dtype(WeightQuant::Native).has_value());
  EXPECT_EQ(weight_quant_dtype(WeightQuant::F32), DType::F32);
  EXPECT_EQ(weight_quant_dtype(WeightQuant::F16), DType::F16);
  EXPECT_EQ(weight_quant_dtype(WeightQuant::Q8), DType::Q8_0);
  EXPECT_EQ(weight_quant_dtype(WeightQuant::Q4), DType::Q4_0);
  EXPECT_EQ(weight_quant_dtype(WeightQuant::Q4_1), DType::Q4_1);
}

TEST(WeightQuant, StoredTypeFallsBackToF16ForPartialBlocks) {
  EXPECT_EQ(stored_type(WeightQuant::Native, DType::Q6_K, 256), DType::Q6_K);
  EXPECT_EQ(stored_type(WeightQuant::Native, DType::F32, 172), DType::F32);
  EXPECT_EQ(stored_type(WeightQuant::Q8, DType::F32, 64), DType::Q8_0);
  EXPECT_EQ(stored_type(WeightQuant::Q8, DType::F32, 172), DType::F16);  // stories260K's ffn_down rows
  EXPECT_EQ(stored_type(WeightQuant::Q4, DType::Q4_1, 96), DType::Q4_0);
  EXPECT_EQ(stored_type(WeightQuant::Q4_1, DType::F16, 33), DType::F16);
  EXPECT_EQ(stored_type(WeightQuant::F32, DType::Q4_0, 32), DType::F32);
  EXPECT_EQ(stored_type(WeightQuant::F16, DType::F32, 7), DType::F16);
  // the 4-bit levels keep the token embedding and the output head at Q8_0 (f16 for partial blocks)
  EXPECT_EQ(stored_type(WeightQuant::Q4, DType::F32, 64, MatrixRole::Embedding), DType::Q8_0);
  EXPECT_EQ(stored_type(WeightQuant::Q4_1, DType::Q4_1, 576, MatrixRole::Output), DType::Q8_0);
  EXPECT_EQ(stored_type(WeightQuant::Q4, DType::F32, 33, MatrixRole::Output), DType::F16);
  EXPECT_EQ(stored_type(WeightQuant::Q4, DType::F32, 64, MatrixRole::Layer), DType::Q4_0);
  EXPECT_EQ(stored_type(WeightQuant::F16, DType::F32, 64, MatrixRole::Embedding), DType::F16);
  EXPECT_EQ(matrix_role("token_embd.weight"), MatrixRole::Embedding);
  EXPECT_EQ(matrix_role("output.weight"), MatrixRole::Output);
  EXPECT_EQ(matrix_role("blk.0.attn_q.weight"), MatrixRole::Layer);
}

TEST(WeightQuant, LlamaCppFileTypes) {
  EXPECT_EQ(llama_file_type(WeightQuant::F32), 0u);   // LLAMA_FTYPE_ALL_F32
  EXPECT_EQ(llama_file_type(WeightQuant::F16), 1u);   // LLAMA_FTYPE_MOSTLY_F16
  EXPECT_EQ(llama_file_type(WeightQuant::Q4), 2u);    // LLAMA_FTYPE_MOSTLY_Q4_0
  EXPECT_EQ(llama_file_type(WeightQuant::Q4_1), 3u);  // LLAMA_FTYPE_MOSTLY_Q4_1
  EXPECT_EQ(llama_file_type(WeightQuant::Q8), 7u);    // LLAMA_FTYPE_MOSTLY_Q8_0
  EXPECT_THROW(llama_file_type(WeightQuant::Native), std::invalid_argument);
}

}  // namespace
}  // namespace inferscope
