// Device profiles (resources/devices) and the dry run's roofline pricing: every shipped profile reads
// with its sources; bad files are refused naming the file and the field; a roofline prices a step by
// its slower roof plus the overhead; and a dry run on a roofline device gives each step exactly the
// time its FLOPs and bytes imply, so a decode step of 8 sequences costs far less than 8 of 1 (the
// weights are read once per step), unlike the linear CPU model.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/workload/workload_runner.h"
#include "core/model/llama_model.h"
#include "core/servesim/device_profile.h"
#include "tests/support/dry_run_bench.h"
#include "tests/support/synthetic_model.h"

namespace inferscope {
namespace {

const std::string kDevices = std::string(INFERSCOPE_SOURCE_DIR) + "/resources/devices";

std::string profile_error(const std::string& body) {
  const std::string path = ::testing::TempDir() + "/device.json";
  std::ofstream(path) << body;
  try {
    read_device_profile(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceProfile, ShippedProfilesReadWithTheirSources) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDevices)) {
    SCOPED_TRACE(entry.path().string());
    const DeviceProfile d = read_device_profile(entry.path().string());
    EXPECT_FALSE(d.name.empty());
    EXPECT_FALSE(d.sources.empty());
    EXPECT_NE(d.linear.has_value(), d.roofline.has_value());
    ++count;
  }
  EXPECT_GE(count, 6);
  const DeviceProfile h200 = read_device_profile(kDevices + "/h200.json");
  ASSERT_TRUE(h200.roofline.has_value());
  EXPECT_DOUBLE_EQ(h200.roofline->bandwidth_bytes_per_s, 4.8e12);
  EXPECT_DOUBLE_EQ(h200.roofline->peak_flops, 989e12);
  EXPECT_DOUBLE_EQ(h200.roofline->step_overhead_s, 20e-6);
  // today's fitted line, as data
  const DeviceProfile cpu = read_device_profile(kDevices + "/linear-cpu.json");
  ASSERT_TRUE(cpu.linear.has_value());
  EXPECT_DOUBLE_EQ(cpu.linear->fixed_s, default_dry_run_cost().fixed_s);
  EXPECT_DOUBLE_EQ(cpu.linear->per_token_s, default_dry_run_cost().per_token_s);
  // A short name is found from any working directory (this test's is the build folder).
  EXPECT_TRUE(device_profile_path("h200").ends_with("resources/devices/h200.json")) << device_profile_path("h200");
  EXPECT_TRUE(std::filesystem::exists(device_profile_path("h200")));
  EXPECT_EQ(device_profile_path("my/gpu.json"), "my/gpu.json");
}

TEST(DeviceProfile, BadFilesNameTheFieldAndTheValue) {
  const std::string ok_head = R"({"name": "x", "sources": ["s"], )";
  EXPECT_NE(profile_error("not json").find("not a JSON object"), std::string::npos);
  EXPECT_NE(profile_error(R"({"name": "x", "sources": ["s"]})").find("field 'kind' is missing"), std::string::npos);
  EXPECT_NE(profile_error(ok_head + R"("kind": "quantum"})").find("'kind' must be \"linear\" or \"roofline\", not \"quantum\""),
            std::string::npos);
  EXPECT_NE(profile_error(ok_head + R"("kind": "roofline", "memory_bandwidth_gb_s": -1, "peak_tflops": 1,
                                       "step_overhead_us": 0})")
                .find("field 'memory_bandwidth_gb_s' must be positive, not -1"),
            std::string::npos);
  EXPECT_NE(profile_error(ok_head + R"("kind": "roofline", "memory_bandwidth_gb_s": 1, "peak_tflops": "fast",
                                       "step_overhead_us": 0})")
                .find("field 'peak_tflops' is missing or has the wrong type: \"fast\""),
            std::string::npos);
  EXPECT_NE(profile_error(ok_head + R"("kind": "linear", "step_fixed_ms": 0, "step_per_token_ms": 0})")
                .find("must be >= 0 and not both 0"),
            std::string::npos);
  EXPECT_NE(profile_error(R"({"name": "x", "kind": "linear", "step_fixed_ms": 1, "step_per_token_ms": 1})")
                .find("field 'sources' is missing"),
            std::string::npos);
  EXPECT_THROW(
      {
        try {
          read_device_profile("/nonexistent/gpu.json");
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "/nonexistent/gpu.json: cannot read the device profile");
          throw;
        }
      },
      std::runtime_error);
}

// 1 GB/s and 1 TFLOP/s, 1 ms overhead: 2 MB read and 1 GFLOP is memory-bound (2 ms), 1 MB and
// 3 GFLOP compute-bound (3 ms).
TEST(RooflineDevice, AStepTakesItsSlowerRoofPlusTheOverhead) {
  const RooflineDevice d{1e9, 1e12, 1e-3};
  EXPECT_DOUBLE_EQ(d.seconds(1e9, 2e6), 2e-3 + 1e-3);
  EXPECT_DOUBLE_EQ(d.seconds(3e9, 1e6), 3e-3 + 1e-3);
  EXPECT_THROW(DryRunExecutor(RooflineDevice{1e9, 1e12, 0}, 10), std::invalid_argument);  // no demand to price
  EXPECT_THROW(DryRunExecutor(RooflineDevice{0, 1e12, 0}, 10, [](const StepPlan&) { return StepDemand{}; }),
               std::invalid_argument);
}

const LlamaModel& synthetic_model() {
  static const auto m = [] {
    test::SyntheticModelSpec spec;
    spec.vocab = test::DryRunBench::kVocab;
    spec.context_length = 512;
    return test::load_synthetic_model(spec);
  }();
  return *m;
}

// The decode steps of a run: the durations of those computing exactly `running` tokens.
std::vector<double> decode_durations(const WorkloadResult& r, int32_t running) {
  std::vector<double> out;
  for (const StepMetrics& s : r.metrics.steps) {
    if (s.prefill_tokens == 0 && s.decode_tokens == running) out.push_back(s.duration_s);
  }
  return out;
}

WorkloadResult dry_run(const DryRunPricing& pricing, int32_t requests) {
  std::vector<Request> rs;
  for (int32_t i = 0; i < requests; ++i) rs.push_back(test::request(i, 16, 8));
  WorkloadRunOptions options;
  options.dry_run = pricing;
  return run_workload(synthetic_model(), EngineConfig{}, rs, options);
}

TEST(RooflineDryRun, EachStepTakesWhatItsFlopsAndBytesImply) {
  const RooflineDevice device{1e9, 1e11, 5e-5};
  const WorkloadResult r = dry_run(device, 8);
  ASSERT_FALSE(r.metrics.steps.empty());
  for (const StepMetrics& s : r.metrics.steps) {
    EXPECT_DOUBLE_EQ(s.duration_s, device.seconds(s.flops, s.weight_bytes_read + s.kv_bytes_read));
  }
  // bandwidth-bound: 8 sequences' decode step reads the weights once, as 1 sequence's does
  const double one = decode_durations(dry_run(device, 1), 1).front(), eight = decode_durations(r, 8).front();
  EXPECT_LT(eight, 1.5 * one);
  // the linear CPU model charges every token
  const WorkloadResult cpu = dry_run(default_dry_run_cost(), 8);
  EXPECT_DOUBLE_EQ(decode_durations(cpu, 8).front(), default_dry_run_cost().seconds(8));
  EXPECT_GT(decode_durations(cpu, 8).front(), 3.0 * decode_durations(dry_run(default_dry_run_cost(), 1), 1).front());
}

}  // namespace
}  // namespace inferscope
