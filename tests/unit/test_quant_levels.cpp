// Weight quantization levels: names both ways, clear errors, the format each matrix gets, and the
// general.file_type values llama.cpp expects.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "core/quant/weight_quant.h"

namespace inferscope {
namespace {

TEST(WeightQuant, NamesRoundTrip) {
  for (WeightQuant l : {WeightQuant::Native, WeightQuant::F32, WeightQuant::F16, WeightQuant::Q8, WeightQuant::Q4,
                        WeightQuant::Q4_1, WeightQuant::Q4_K, WeightQuant::Q6_K}) {
    const auto parsed = weight_quant_from_name(weight_quant_name(l));
    ASSERT_TRUE(parsed.has_value()) << weight_quant_name(l);
    EXPECT_EQ(*parsed, l);
    EXPECT_EQ(parse_weight_quant(weight_quant_name(l)), l);
  }
  EXPECT_EQ(weight_quant_name(WeightQuant::Q4_1), "q4_1");
  EXPECT_EQ(weight_quant_names(), "native, f32, f16, q8, q4, q4_1, q4_k, q6_k");
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
    EXPECT_NE(msg.find("native, f32, f16, q8, q4, q4_1, q4_k, q6_k"), std::string::npos) << msg;
  }
}

TEST(WeightQuant, LevelFormats) {
  EXPECT_FALSE(weight_quant_dtype(WeightQuant::Native).has_value());
  EXPECT_EQ(weight_quant_dtype(WeightQuant::F32), DType::F32);
  EXPECT_EQ(weight_quant_dtype(WeightQuant::F16), DType::F16);
  EXPECT_EQ(weight_quant_dtype(WeightQuant::Q8), DType::Q8_0);
  EXPECT_EQ(weight_quant_dtype(WeightQuant::Q4), DType::Q4_0);
  EXPECT_EQ(weight_quant_dtype(WeightQuant::Q4_1), DType::Q4_1);
  EXPECT_EQ(weight_quant_dtype(WeightQuant::Q4_K), DType::Q4_K);
  EXPECT_EQ(weight_quant_dtype(WeightQuant::Q6_K), DType::Q6_K);
}

DType stored(WeightQuant level, DType source, int64_t cols, MatrixPlace place = {}) {
  return matrix_format(level, source, cols, place).stored;
}

TEST(WeightQuant, PartialBlocksFallBackAsLlamaCppDoes) {
  EXPECT_EQ(stored(WeightQuant::Native, DType::Q6_K, 256), DType::Q6_K);
  EXPECT_EQ(stored(WeightQuant::Native, DType::F32, 172), DType::F32);
  EXPECT_EQ(stored(WeightQuant::Q8, DType::F32, 64), DType::Q8_0);
  EXPECT_EQ(stored(WeightQuant::Q8, DType::F32, 172), DType::F16);  // stories260K's ffn_down rows
  EXPECT_EQ(stored(WeightQuant::Q4, DType::Q4_1, 96), DType::Q4_0);
  EXPECT_EQ(stored(WeightQuant::Q4_1, DType::F16, 33), DType::F16);
  EXPECT_EQ(stored(WeightQuant::F32, DType::Q4_0, 32), DType::F32);
  EXPECT_EQ(stored(WeightQuant::F16, DType::F32, 7), DType::F16);
  // K-quants need rows of whole 256-blocks: Q4_K -> Q5_0, Q6_K -> Q8_0, then f16
  EXPECT_EQ(stored(WeightQuant::Q4_K, DType::F32, 512), DType::Q4_K);
  EXPECT_EQ(stored(WeightQuant::Q4_K, DType::F32, 576), DType::Q5_0);  // the demo model's rows
  EXPECT_EQ(stored(WeightQuant::Q4_K, DType::F32, 100), DType::F16);
  EXPECT_EQ(stored(WeightQuant::Q6_K, DType::Q4_K, 2048), DType::Q6_K);
  EXPECT_EQ(stored(WeightQuant::Q6_K, DType::Q4_K, 640), DType::Q8_0);  // Gemma 3 270M's rows
  const MatrixFormat f = matrix_format(WeightQuant::Q4_K, DType::F32, 576);
  EXPECT_EQ(f.wanted, DType::Q4_K);
  EXPECT_TRUE(f.fallback());
  EXPECT_FALSE(matrix_format(WeightQuant::Q4_K, DType::F32, 768).fallback());
  EXPECT_FALSE(matrix_format(WeightQuant::Native, DType::Q4_K, 576).fallback());
}

TEST(WeightQuant, MatrixPlacesFromTensorNames) {
  const MatrixPlace v = matrix_place("blk.17.attn_v.weight", 30, true);
  EXPECT_EQ(v.kind, MatrixKind::AttnV);
  EXPECT_EQ(v.layer, 17);
  EXPECT_EQ(v.n_layers, 30);
  EXPECT_EQ(matrix_place("blk.3.ffn_down.weight", 30, true).kind, MatrixKind::FfnDown);
  EXPECT_EQ(matrix_place("blk.0.attn_qkv.weight", 30, true).kind, MatrixKind::AttnQkv);
  EXPECT_EQ(matrix_place("blk.0.attn_q.weight", 30, true).kind, MatrixKind::Other);
  EXPECT_EQ(matrix_place("blk.0.attn_v.bias", 30, true).kind, MatrixKind::Other);
  EXPECT_EQ(matrix_place("blk.x.attn_v.weight", 30, true).kind, MatrixKind::Other);
  EXPECT_EQ(matrix_place("output.weight", 30, false).kind, MatrixKind::OutputHead);
  EXPECT_EQ(matrix_place("token_embd.weight", 30, true).kind, MatrixKind::OutputHead);  // tied
  EXPECT_EQ(matrix_place("token_embd.weight", 30, false).kind, MatrixKind::Embedding);
}

// llama.cpp's use_more_bits for 16 and 30 layers: i < n/8, i >= 7n/8, or (i - n/8) % 3 == 2.
TEST(WeightQuant, MoreBitsLayers) {
  std::vector<int32_t> more;
  for (int32_t i = 0; i < 16; ++i) {
    if (uses_more_bits(i, 16)) more.push_back(i);
  }
  EXPECT_EQ(more, (std::vector<int32_t>{0, 1, 4, 7, 10, 13, 14, 15}));
  more.clear();
  for (int32_t i = 0; i < 30; ++i) {
    if (uses_more_bits(i, 30)) more.push_back(i);
  }
  EXPECT_EQ(more, (std::vector<int32_t>{0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 26, 27, 28, 29}));
}

TEST(WeightQuant, HeadsKeepSixBitsBelowEight) {
  const MatrixPlace head{MatrixKind::OutputHead, 0, 30}, embd{MatrixKind::Embedding, 0, 30};
  for (WeightQuant level : {WeightQuant::Q4, WeightQuant::Q4_1, WeightQuant::Q4_K, WeightQuant::Q6_K}) {
    SCOPED_TRACE(std::string(weight_quant_name(level)));
    EXPECT_EQ(stored(level, DType::F32, 2048, head), DType::Q6_K);
    EXPECT_EQ(stored(level, DType::F32, 2048, embd), DType::Q6_K);
    EXPECT_EQ(stored(level, DType::F32, 576, head), DType::Q8_0);
    EXPECT_EQ(stored(level, DType::F32, 33, head), DType::F16);
  }
  EXPECT_EQ(stored(WeightQuant::Q8, DType::F32, 2048, head), DType::Q8_0);
  EXPECT_EQ(stored(WeightQuant::F16, DType::F32, 64, embd), DType::F16);
}

// Q4_K_M: Q4_K, Q6_K for attn_v and ffn_down in the more-bits layers, Q5_K for a fused attn_qkv.
TEST(WeightQuant, Q4KMediumMix) {
  const auto at = [](MatrixKind kind, int32_t layer) {
    return stored(WeightQuant::Q4_K, DType::F32, 1024, MatrixPlace{kind, layer, 16});
  };
  EXPECT_EQ(at(MatrixKind::AttnV, 0), DType::Q6_K);
  EXPECT_EQ(at(MatrixKind::AttnV, 2), DType::Q4_K);
  EXPECT_EQ(at(MatrixKind::AttnV, 4), DType::Q6_K);
  EXPECT_EQ(at(MatrixKind::FfnDown, 15), DType::Q6_K);
  EXPECT_EQ(at(MatrixKind::FfnDown, 5), DType::Q4_K);
  EXPECT_EQ(at(MatrixKind::AttnQkv, 5), DType::Q5_K);
  EXPECT_EQ(at(MatrixKind::Other, 0), DType::Q4_K);
  // q6_k is Q6_K everywhere
  EXPECT_EQ(stored(WeightQuant::Q6_K, DType::F32, 1024, MatrixPlace{MatrixKind::AttnQkv, 0, 16}), DType::Q6_K);
  // a fused attn_qkv of rows that are not whole 256-blocks: Q5_K -> Q5_1
  EXPECT_EQ(stored(WeightQuant::Q4_K, DType::F32, 96, MatrixPlace{MatrixKind::AttnQkv, 0, 16}), DType::Q5_1);
}

TEST(WeightQuant, LlamaCppFileTypes) {
  EXPECT_EQ(llama_file_type(WeightQuant::F32), 0u);   // LLAMA_FTYPE_ALL_F32
  EXPECT_EQ(llama_file_type(WeightQuant::F16), 1u);   // LLAMA_FTYPE_MOSTLY_F16
  EXPECT_EQ(llama_file_type(WeightQuant::Q4), 2u);    // LLAMA_FTYPE_MOSTLY_Q4_0
  EXPECT_EQ(llama_file_type(WeightQuant::Q4_1), 3u);  // LLAMA_FTYPE_MOSTLY_Q4_1
  EXPECT_EQ(llama_file_type(WeightQuant::Q8), 7u);    // LLAMA_FTYPE_MOSTLY_Q8_0
  EXPECT_EQ(llama_file_type(WeightQuant::Q4_K), 15u);  // LLAMA_FTYPE_MOSTLY_Q4_K_M
  EXPECT_EQ(llama_file_type(WeightQuant::Q6_K), 18u);  // LLAMA_FTYPE_MOSTLY_Q6_K
  EXPECT_THROW(llama_file_type(WeightQuant::Native), std::invalid_argument);
}

}  // namespace
}  // namespace inferscope
