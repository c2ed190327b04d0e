// Model shapes (resources/model-shapes) and tensor parallelism in the dry run: every shipped shape
// reads; a bad file is refused naming the file, the field and the value; the SmolLM2-135M shape
// prices every step exactly as the demo model's file does at the same weight level (the shapes path
// equals the file path); and tensor parallelism divides a step's FLOPs and bytes by N and adds two
// ring all-reduces per layer, as hand-computed here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/servesim/shape_model.h"
#include "core/engine/step_cost.h"
#include "core/quant/converted_weights.h"
#include "core/servesim/dry_run_executor.h"
#include "core/servesim/model_shape.h"
#include "core/sched/scheduler.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

const std::string kShapes = test::source_path("resources/model-shapes");

std::string shape_error(const std::string& body) {
  const std::string path = ::testing::TempDir() + "/shape.json";
  std::ofstream(path) << body;
  try {
    read_model_shape(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(ModelShape, ShippedShapesReadWithTheirSources) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kShapes)) {
    SCOPED_TRACE(entry.path().string());
    const ModelShape s = read_model_shape(entry.path().string());
    EXPECT_NE(s.source.find("config.json"), std::string::npos);
    ++count;
  }
  EXPECT_GE(count, 4);
  const ModelShape l8 = read_model_shape(kShapes + "/llama-3-8b.json");
  EXPECT_EQ(l8.layers, 32);
  EXPECT_EQ(l8.hidden_size, 4096);
  EXPECT_EQ(l8.heads, 32);
  EXPECT_EQ(l8.kv_heads, 8);
  EXPECT_EQ(l8.head_dim, 128);
  EXPECT_EQ(l8.ffn_size, 14336);
  EXPECT_EQ(l8.vocab_size, 128256);
  EXPECT_FALSE(l8.tied_embeddings);
  // Llama-3-8B in bf16: 8,030,261,248 parameters less the 266,240 of its norm vectors, 2 bytes each
  const auto model = model_of_shape(l8, "bf16");
  EXPECT_EQ(model->parameter_count(), 8029995008);
  EXPECT_EQ(model->weights().matrix_bytes(), 2 * 8029995008ULL);
  // A short name is found from any working directory (this test's is the build folder).
  EXPECT_TRUE(model_shape_path("llama-3-8b").ends_with("resources/model-shapes/llama-3-8b.json")) << model_shape_path("llama-3-8b");
  EXPECT_TRUE(std::filesystem::exists(model_shape_path("llama-3-8b")));
}

TEST(ModelShape, BadFilesNameTheFileTheFieldAndTheValue) {
  const std::string path = ::testing::TempDir() + "/shape.json";
  const std::string head = R"({"name": "x", "source": "s", "layers": 2, "hidden_size": 64, "head_dim": 16, )"
                           R"("ffn_size": 128, "vocab_size": 100, "tied_embeddings": true, "context_length": 256, )";
  EXPECT_EQ(shape_error(head + R"("heads": 4, "kv_heads": 2})"), "");
  EXPECT_EQ(shape_error(head + R"("heads": 4})"), path + ": field 'kv_heads' is missing");
  EXPECT_EQ(shape_error(head + R"("heads": "4", "kv_heads": 2})"), path + ": field 'heads' must be a whole number, not \"4\"");
  EXPECT_EQ(shape_error(head + R"("heads": 4.5, "kv_heads": 2})"), path + ": field 'heads' must be a whole number, not 4.5");
  EXPECT_EQ(shape_error(head + R"("heads": 0, "kv_heads": 2})"),
            path + ": field 'heads' must be positive (and below 2^31), not 0");
  EXPECT_EQ(shape_error(head + R"("heads": 4, "kv_heads": 3})"),
            path + ": field 'heads' (4) must be a multiple of field 'kv_heads' (3)");
  EXPECT_EQ(shape_error(R"({"name": "x"})"), path + ": field 'source' is missing or has the wrong type");
  EXPECT_THROW(model_of_shape(read_model_shape(kShapes + "/smollm2-135m.json"), "q3"), std::invalid_argument);
  EXPECT_THROW(model_of_shape(read_model_shape(kShapes + "/smollm2-135m.json"), "native"), std::invalid_argument);
}

// The same steps cost the same FLOPs and bytes from the shape as from the demo model's file.
TEST(ModelShape, SmolLm2ShapePricesStepsExactlyAsTheDemoFile) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const auto file = LlamaModel::load(path);
  const ModelShape shape = read_model_shape(kShapes + "/smollm2-135m.json");
  const LlamaConfig& fc = file->config();
  EXPECT_EQ(shape.layers, fc.n_layers);
  EXPECT_EQ(shape.hidden_size, fc.dim);
  EXPECT_EQ(shape.heads, fc.n_heads);
  EXPECT_EQ(shape.kv_heads, fc.n_kv_heads);
  EXPECT_EQ(shape.head_dim, fc.head_dim);
  EXPECT_EQ(shape.ffn_size, fc.ffn_dim);
  EXPECT_EQ(shape.vocab_size, fc.vocab_size);
  EXPECT_EQ(shape.tied_embeddings, fc.tied_output);
  EXPECT_EQ(shape.context_length, fc.context_length);
  ThreadPool pool(1);
  for (const WeightQuant level : {WeightQuant::F16, WeightQuant::Q8}) {
    SCOPED_TRACE(std::string(weight_quant_name(level)));
    const auto converted = ConvertedWeights::convert(*file, level, pool);
    const auto shaped = model_of_shape(shape, weight_quant_name(level));
    const size_t kv_bytes = file->kv_geometry(DType::F16).bytes_per_token();
    ASSERT_EQ(shaped->kv_geometry(DType::F16).bytes_per_token(), kv_bytes);
    EXPECT_EQ(shaped->weights().matrix_bytes(), converted->weight_bytes());
    const StepCostModel from_file(fc, converted->weights(), kv_bytes);
    const StepCostModel from_shape(shaped->config(), shaped->weights(), kv_bytes);
    for (const auto& [a, b] : {std::pair{from_file.prefill(1000, 256), from_shape.prefill(1000, 256)},
                               std::pair{from_file.decode(64), from_shape.decode(64)}}) {
      EXPECT_EQ(a.matmul_flops, b.matmul_flops);
      EXPECT_EQ(a.attention_flops, b.attention_flops);
      EXPECT_EQ(a.weight_bytes, b.weight_bytes);
      EXPECT_EQ(a.kv_bytes, b.kv_bytes);
    }
  }
}

TEST(TensorParallel, AllReduceIsTheRingFormula) {
  TensorParallel tp{4, DeviceLink{450e9, 8e-6}, 80, 8192, 2};
  // 16 tokens x 8192 x 2 bytes = 262,144 bytes; 2 x 3/4 of them over 450 GB/s, plus 8 us
  EXPECT_DOUBLE_EQ(tp.all_reduce_seconds(16), 1.5 * 262144 / 450e9 + 8e-6);
  EXPECT_DOUBLE_EQ(tp.step_seconds(16), 160 * (1.5 * 262144 / 450e9 + 8e-6));
  tp.devices = 1;
  EXPECT_EQ(tp.step_seconds(16), 0);
  EXPECT_NO_THROW(check_tensor_parallel(8, 64, 8));
  EXPECT_THROW(check_tensor_parallel(0, 64, 8), std::invalid_argument);
  try {
    check_tensor_parallel(3, 64, 8);
    ADD_FAILURE() << "3 devices do not divide 64 heads";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("64 attention heads do not divide by 3"), std::string::npos) << e.what();
  }
  try {
    check_tensor_parallel(16, 64, 8);
    ADD_FAILURE() << "16 devices do not divide 8 KV heads";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("8 KV heads do not divide by 16"), std::string::npos) << e.what();
  }
}

// A step on N devices: max(bytes / N / bandwidth, FLOPs / N / peak) + overhead + 2 all-reduces per layer.
TEST(TensorParallel, DryRunStepDividesTheWorkAndAddsTheAllReduces) {
  const RooflineDevice device{4e12, 1e15, 20e-6};
  const StepDemandFn demand = [](const StepPlan&) { return StepDemand{6e12, 16e9}; };
  StepPlan plan;
  const std::vector<TokenId> history(40, 1);
  plan.seqs.push_back(ScheduledSeq{1, history, 24});
  plan.seqs.push_back(ScheduledSeq{2, std::span(history).first(10), 1});
  for (const int32_t n : {1, 2, 8}) {
    DryRunPricing pricing(device);
    pricing.tensor_parallel = TensorParallel{n, DeviceLink{450e9, 8e-6}, 32, 4096, 2};
    DryRunExecutor executor(pricing, 100, demand);
    // 25 tokens: 25 x 4096 x 2 = 204,800 bytes per all-reduce, 64 of them
    const double comm = n == 1 ? 0 : 64 * (2.0 * (n - 1) / n * 204800 / 450e9 + 8e-6);
    const double expected = std::max(16e9 / n / 4e12, 6e12 / n / 1e15) + 20e-6 + comm;
    EXPECT_DOUBLE_EQ(executor.execute(plan).seconds, expected) << n << " devices";
  }
  DryRunPricing no_link(device);
  no_link.tensor_parallel.devices = 2;
  EXPECT_THROW(DryRunExecutor(no_link, 100, demand), std::invalid_argument);
  DryRunPricing linear(DryRunCost{0.005, 0.003});
  linear.tensor_parallel.devices = 2;
  EXPECT_THROW(DryRunExecutor(linear, 100), std::invalid_argument);
}

}  // namespace
}  // namespace inferscope
