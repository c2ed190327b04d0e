// Converting a loaded model's weights to each quantization level (synthetic models): every matrix
// within its format's rounding bound, exact where the format can be exact, partial blocks falling
// back to f16, progress and cancellation, and a saved file that reloads to the same logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/engine_runs.h"
#include "core/gguf/gguf_file.h"
#include "core/model/llama_model.h"
#include "core/quant/converted_weights.h"
#include "core/quant/quantized_gguf.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/support/synthetic_model.h"

namespace inferscope {
namespace {

using test::SyntheticModelSpec;

constexpr WeightQuant kConvertingLevels[] = {WeightQuant::F32, WeightQuant::F16, WeightQuant::Q8, WeightQuant::Q4,
                                             WeightQuant::Q4_1};
const TokenId kPrompt[] = {1, 5, 9, 3, 17, 4, 30, 2, 11, 40};

SyntheticModelSpec f32_spec() {
  SyntheticModelSpec s;
  s.dim = 64, s.ffn_dim = 96, s.vocab = 48, s.seed = 21;
  return s;
}

// ffn_dim 100: the w_down rows (100 elements) are not whole blocks of 32.
SyntheticModelSpec partial_block_spec() {
  SyntheticModelSpec s = f32_spec();
  s.ffn_dim = 100, s.tied_output = true, s.seed = 22;
  return s;
}

// f32_spec()'s shape with every matrix stored as `weights`.
std::unique_ptr<LlamaModel> model_stored_as(DType weights) {
  SyntheticModelSpec spec = f32_spec();
  spec.weight_dtype = weights;
  return test::load_synthetic_model(spec);
}

std::vector<float> row_values(const MatrixRef& m, int64_t r) {
  std::vector<float> v(static_cast<size_t>(m.cols));
  dequantize_row(m.type, static_cast<const uint8_t*>(m.data) + m.row_stride * r, v.data(), m.cols);
  return v;
}

// The largest error rounding the block x[0..n) into `type` may leave at element j (the analysis of
// tests/unit/test_quantize.cpp: half a step, a full step for Q4_0's capped code, plus the f16 scale).
float error_bound(DType type, const float* x, int n, int j) {
  const auto [lo, hi] = std::minmax_element(x, x + n);
  const float amax = std::max(std::fabs(*lo), std::fabs(*hi));
  switch (type) {
    case DType::F32: return 0.0f;
    case DType::F16: return std::max(std::fabs(x[j]) * 0x1p-11f, 0x1p-25f);
    case DType::Q8_0: return 0.57f * amax / 127.0f + 1e-7f * amax;
    case DType::Q4_0: return 1.01f * amax / 8.0f + 1e-7f * amax;
    case DType::Q4_1: return 0.51f * (*hi - *lo) / 15.0f + std::fabs(*lo) * 0x1p-11f + 1e-7f * amax;
    default: ADD_FAILURE() << "no bound for " << dtype_name(type); return 0.0f;
  }
}

std::vector<float> logits_at(const LlamaModel& model, WeightQuant level) {
  EngineConfig config;
  config.threads = 2;
  config.quant = level;
  return test::engine_logits(model, config, kPrompt);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(QuantConversion, EveryMatrixWithinItsFormatBound) {
  const auto model = test::load_synthetic_model(f32_spec());
  ThreadPool pool(2);
  for (WeightQuant level : kConvertingLevels) {
    SCOPED_TRACE(std::string(weight_quant_name(level)));
    const auto cw = ConvertedWeights::convert(*model, level, pool);
    const DType type = *weight_quant_dtype(level);
    // token_embd, 2 x 7 layer matrices, output
    ASSERT_EQ(cw->matrices().size(), 16u);
    // the 4-bit levels want Q6_K for the token embedding and the output head (weight_quant.h): rows
    // of 64 are not whole 256-blocks, so they fall back to Q8_0
    const bool four_bit = type == DType::Q4_0 || type == DType::Q4_1;
    EXPECT_EQ(fallback_summary(cw->fallbacks()), four_bit ? "2 q6_K -> q8_0" : "");
    double total_error = 0;
    for (const ConvertedMatrix& m : cw->matrices()) {
      const bool head = m.name == "token_embd.weight" || m.name == "output.weight";
      ASSERT_EQ(m.weights.type, four_bit && head ? DType::Q8_0 : type) << m.name;
      ASSERT_EQ(m.weights.type, m.format.stored) << m.name;
      ASSERT_EQ(m.weights.rows, m.source.rows);
      ASSERT_EQ(m.weights.cols, m.source.cols);
      for (int64_t r = 0; r < m.source.rows; ++r) {
        const std::vector<float> src = row_values(m.source, r), got = row_values(m.weights, r);
        const int block = static_cast<int>(dtype_info(type).block_size == 1 ? 1 : 32);
        for (int64_t j = 0; j < m.source.cols; ++j) {
          const int64_t b0 = j / 32 * 32;  // the 32-element block holding j (its own block for floats)
          const float bound = block == 1 ? error_bound(type, &src[j], 1, 0)
                                         : error_bound(type, &src[b0], 32, static_cast<int>(j - b0));
          ASSERT_LE(std::fabs(got[j] - src[j]), bound) << m.name << " row " << r << " col " << j;
          total_error += std::fabs(got[j] - src[j]);
        }
      }
    }
    if (level == WeightQuant::F32) {
      EXPECT_EQ(total_error, 0.0);
    } else {
      EXPECT_GT(total_error, 0.0);  // really rounded
    }
    // the forward pass reads the converted matrices
    EXPECT_EQ(cw->weights().layers[1].w_up.data, cw->matrices()[13].weights.data);
    EXPECT_EQ(cw->weight_bytes(), cw->weights().matrix_bytes());
  }
}

TEST(QuantConversion, F32LevelOfAnF32ModelIsNativeBitForBit) {
  const auto model = test::load_synthetic_model(f32_spec());
  ThreadPool pool(2);
  const auto cw = ConvertedWeights::convert(*model, WeightQuant::F32, pool);
  EXPECT_EQ(cw->converted_count(), 0);  // already f32: the model's own matrices, no copy
  EXPECT_EQ(cw->weights().token_embd.data, model->weights().token_embd.data);
  EXPECT_EQ(cw->weights().layers[0].attn_norm, model->weights().layers[0].attn_norm);
  EXPECT_EQ(cw->weight_bytes(), model->weights().matrix_bytes());
  const std::vector<float> native = logits_at(*model, WeightQuant::Native);
  EXPECT_TRUE(same_bits(logits_at(*model, WeightQuant::F32), native));
  for (float v : native) ASSERT_TRUE(std::isfinite(v));
}

TEST(QuantConversion, F32LevelOfAnF16ModelIsExact) {
  const auto model = model_stored_as(DType::F16);
  ThreadPool pool(2);
  const auto cw = ConvertedWeights::convert(*model, WeightQuant::F32, pool);
  EXPECT_EQ(cw->converted_count(), 16);
  EXPECT_EQ(cw->weight_bytes(), 2 * model->weights().matrix_bytes());
  for (const ConvertedMatrix& m : cw->matrices()) {
    for (int64_t r = 0; r < m.source.rows; ++r) ASSERT_EQ(row_values(m.weights, r), row_values(m.source, r)) << m.name;
  }
  // same values, other kernels: equal up to f32 rounding
  const std::vector<float> native = logits_at(*model, WeightQuant::Native), f32 = logits_at(*model, WeightQuant::F32);
  ASSERT_EQ(native.size(), f32.size());
  // the same 1e-4 as the f32-cache bound of test_forward_reference (f32 rounding along a logit's path)
  for (size_t i = 0; i < native.size(); ++i) ASSERT_NEAR(f32[i], native[i], 1e-4f * (1.0f + std::fabs(native[i]))) << i;
}

TEST(QuantConversion, MatricesAlreadyInTheLevelsFormatAreShared) {
  const auto model = model_stored_as(DType::Q8_0);
  ThreadPool pool(2);
  const auto q8 = ConvertedWeights::convert(*model, WeightQuant::Q8, pool);
  EXPECT_EQ(q8->converted_count(), 0);
  EXPECT_EQ(q8->weights().layers[1].wo.data, model->weights().layers[1].wo.data);
  const auto native = ConvertedWeights::convert(*model, WeightQuant::Native, pool);
  EXPECT_EQ(native->converted_count(), 0);
  EXPECT_EQ(native->weights().output.data, model->weights().output.data);
  EXPECT_TRUE(same_bits(logits_at(*model, WeightQuant::Q8), logits_at(*model, WeightQuant::Native)));
  const auto q4 = ConvertedWeights::convert(*model, WeightQuant::Q4, pool);
  // all but the token embedding and the output head, which q4 keeps at Q8_0: the model's own
  EXPECT_EQ(q4->converted_count(), 14);
  EXPECT_EQ(q4->weights().token_embd.data, model->weights().token_embd.data);
  EXPECT_LT(q4->weight_bytes(), q8->weight_bytes());
}

TEST(QuantConversion, PartialBlocksFallBackToF16AndTiedOutputIsConvertedOnce) {
  const auto model = test::load_synthetic_model(partial_block_spec());
  ThreadPool pool(2);
  for (WeightQuant level : {WeightQuant::Q8, WeightQuant::Q4, WeightQuant::Q4_1}) {
    SCOPED_TRACE(std::string(weight_quant_name(level)));
    const auto cw = ConvertedWeights::convert(*model, level, pool);
    const std::vector<MatrixFallback> fallbacks = cw->fallbacks();
    std::vector<std::string> names;
    for (const MatrixFallback& f : fallbacks) names.push_back(f.name);
    const bool four_bit = level != WeightQuant::Q8;
    std::vector<std::string> want = {"blk.0.ffn_down.weight", "blk.1.ffn_down.weight"};
    if (four_bit) want.insert(want.begin(), "token_embd.weight");  // Q6_K wanted, stored Q8_0
    EXPECT_EQ(names, want);
    EXPECT_EQ(cw->weights().layers[0].w_down.type, DType::F16);
    EXPECT_EQ(cw->weights().layers[0].w_up.type, *weight_quant_dtype(level));
    // tied: token_embd is converted once and the classifier reads the same buffer
    EXPECT_EQ(cw->matrices().size(), 15u);
    EXPECT_EQ(cw->weights().output.data, cw->weights().token_embd.data);
    // q8 stores it as Q8_0; the 4-bit levels want Q6_K, which rows of 64 cannot hold: Q8_0 too
    EXPECT_EQ(cw->weights().output.type, DType::Q8_0);
    for (float v : logits_at(*model, level)) ASSERT_TRUE(std::isfinite(v));
  }
  for (WeightQuant level : {WeightQuant::F32, WeightQuant::F16}) {
    EXPECT_TRUE(ConvertedWeights::convert(*model, level, pool)->fallbacks().empty());
  }
}

// The coarser the format, the farther the logits move from native (random weights amplify rounding,
// so only f16 and q8 get a fixed bound).
TEST(QuantConversion, LogitsDriftGrowsAsTheFormatCoarsens) {
  const auto model = test::load_synthetic_model(f32_spec());
  const std::vector<float> native = logits_at(*model, WeightQuant::Native);
  double scale = 0;
  for (float v : native) scale = std::max(scale, static_cast<double>(std::fabs(v)));
  std::vector<double> drift;
  for (WeightQuant level : {WeightQuant::F16, WeightQuant::Q8, WeightQuant::Q4_1}) {
    const std::vector<float> got = logits_at(*model, level);
    double worst = 0;
    for (size_t i = 0; i < native.size(); ++i) worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - native[i]));
    drift.push_back(worst / scale);
  }
  // about 10x each format's rounding step, for the few layers' amplification: f16 moves a weight by
  // up to 2^-11 of itself (4.9e-4), q8 by up to 1/254 of its block's largest |value| (3.9e-3)
  EXPECT_GT(drift[0], 0.0);
  EXPECT_LT(drift[0], 0.005);
  EXPECT_LT(drift[1], 0.05);
  EXPECT_LT(drift[0], drift[1]);
  EXPECT_LT(drift[1], drift[2]);
}

TEST(QuantConversion, ProgressRisesToOne) {
  const auto model = test::load_synthetic_model(f32_spec());
  ThreadPool pool(2);
  std::vector<std::pair<double, std::string>> calls;
  const ConversionControl control{[&](double f, const std::string& name) { calls.emplace_back(f, name); }};
  const auto cw = ConvertedWeights::convert(*model, WeightQuant::Q4, pool, control);
  ASSERT_GE(calls.size(), cw->matrices().size());
  for (size_t i = 1; i < calls.size(); ++i) EXPECT_GE(calls[i].first, calls[i - 1].first);
  EXPECT_GT(calls.front().first, 0.0);
  EXPECT_EQ(calls.back().first, 1.0);
  EXPECT_EQ(calls.front().second, "token_embd.weight");
  EXPECT_EQ(calls.back().second, "output.weight");
  // nothing to convert: one call, at 1, naming no tensor
  calls.clear();
  ConvertedWeights::convert(*model, WeightQuant::Native, pool, control);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0], (std::pair<double, std::string>{1.0, ""}));
}

TEST(QuantConversion, CancelStopsTheConversion) {
  const auto model = test::load_synthetic_model(f32_spec());
  ThreadPool pool(2);
  std::atomic<bool> cancel{true};
  int reports = 0;
  ConversionControl control{[&](double, const std::string&) { ++reports; }, &cancel};
  EXPECT_THROW(ConvertedWeights::convert(*model, WeightQuant::Q8, pool, control), ConversionCancelled);
  EXPECT_EQ(reports, 0);
  // cancelled while running, from the progress callback after the first matrix
  cancel = false;
  control.on_progress = [&](double, const std::string&) {
    ++reports;
    cancel = true;
  };
  EXPECT_THROW(ConvertedWeights::convert(*model, WeightQuant::Q8, pool, control), ConversionCancelled);
  EXPECT_EQ(reports, 1);
  // the model is untouched: a later conversion runs to the end
  cancel = false;
  control.on_progress = nullptr;
  EXPECT_EQ(ConvertedWeights::convert(*model, WeightQuant::Q8, pool, control)->converted_count(), 16);
}

// A file written at a level and loaded back runs exactly as the in-memory conversion at that level.
TEST(QuantizedFile, ReloadsWithTheInMemoryLogits) {
  for (const SyntheticModelSpec& spec : {f32_spec(), partial_block_spec()}) {
    const auto model = test::load_synthetic_model(spec);
    const std::string path = ::testing::TempDir() + "/quantized-" + std::to_string(spec.seed) + ".gguf";
    ThreadPool pool(2);
    for (WeightQuant level : kConvertingLevels) {
      SCOPED_TRACE(spec.describe() + " at " + std::string(weight_quant_name(level)));
      const QuantizedFileSummary s = write_quantized_gguf(model->file(), level, path, pool);
      const auto saved = LlamaModel::load(path);
      const GgufFile& f = saved->file();
      EXPECT_EQ(f.get_int("general.file_type"), llama_file_type(level));
      const bool block_level = level != WeightQuant::F32 && level != WeightQuant::F16;
      EXPECT_EQ(f.has("general.quantization_version"), block_level);
      // metadata kept
      for (const auto& [key, value] : model->file().metadata()) {
        if (key == "general.file_type") continue;
        ASSERT_NE(f.find(key), nullptr) << key;
        EXPECT_EQ(*f.find(key), value) << key;
      }
      // 2-D tensors in the level's format (f16 for partial blocks), 1-D tensors byte for byte
      ASSERT_EQ(f.tensors().size(), model->file().tensors().size());
      for (const GgufTensorInfo& in : model->file().tensors()) {
        const GgufTensorInfo& out = f.tensor(in.name);
        EXPECT_EQ(out.dims, in.dims) << in.name;
        if (in.dims.size() == 1) {
          ASSERT_EQ(out.n_bytes, in.n_bytes);
          EXPECT_EQ(std::memcmp(out.data, in.data, in.n_bytes), 0) << in.name;
        } else {
          EXPECT_EQ(out.type, matrix_format(level, in.type, in.dims[0], tensor_place(model->file(), in.name)).stored)
              << in.name;
        }
      }
      EXPECT_EQ(s.tensors, static_cast<int>(f.tensors().size()));
      EXPECT_EQ(fallback_summary(fallbacks_of(s.formats)), fallback_summary(ConvertedWeights::convert(*model, level, pool)->fallbacks()));
      EXPECT_TRUE(same_bits(logits_at(*saved, WeightQuant::Native), logits_at(*model, level)));
    }
    std::filesystem::remove(path);
  }
}

TEST(QuantizedFile, RefusesNativeAndTheInputFile) {
  const std::string path = ::testing::TempDir() + "/quantize-input.gguf";
  test::write_synthetic_model(f32_spec(), path);
  const auto model = LlamaModel::load(path);
  ThreadPool pool(1);
  EXPECT_THROW(write_quantized_gguf(model->file(), WeightQuant::Native, path + ".out", pool), std::invalid_argument);
  const auto size = std::filesystem::file_size(path);
  try {
    write_quantized_gguf(model->file(), WeightQuant::Q4, path, pool);
    FAIL() << "wrote over the input";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("input file"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::filesystem::file_size(path), size);
  EXPECT_FALSE(std::filesystem::exists(path + ".out"));
  std::filesystem::remove(path);
}

TEST(QuantizedFile, CancelLeavesNoFile) {
  const auto model = test::load_synthetic_model(f32_spec());
  const std::string path = ::testing::TempDir() + "/cancelled.gguf";
  ThreadPool pool(2);
  std::atomic<bool> cancel{false};
  const ConversionControl control{[&](double, const std::string&) { cancel = true; }, &cancel};
  EXPECT_THROW(write_quantized_gguf(model->file(), WeightQuant::Q8, path, pool, control), ConversionCancelled);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

}  // namespace
}  // namespace inferscope
