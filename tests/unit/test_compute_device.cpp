// --device: the names it takes, the values it refuses, and CUDA asked for where it cannot run.
#include <gtest/gtest.h>

#include <string>

#include "core/cli/args.h"
#include "core/cli/bench_backend.h"
#include "core/cli/model_options.h"
#include "core/engine/engine_core.h"
#include "core/model/compute_device.h"
#include "tests/support/synthetic_model.h"

namespace inferscope {
namespace {

TEST(ComputeDevice, ParsesCpuCudaAndCudaN) {
  EXPECT_EQ(compute_device_from_name("cpu"), ComputeDevice{});
  EXPECT_EQ(compute_device_from_name("cuda"), (ComputeDevice{true, 0}));
  EXPECT_EQ(compute_device_from_name("cuda:3"), (ComputeDevice{true, 3}));
  EXPECT_EQ(compute_device_name(ComputeDevice{true, 3}), "cuda:3");
  EXPECT_EQ(compute_device_name(ComputeDevice{}), "cpu");
}

TEST(ComputeDevice, RefusesOtherNames) {
  for (const char* bad : {"", "gpu", "CUDA", "cuda:", "cuda:-1", "cuda:1x", "cuda:0:1", "cpu0"}) {
    EXPECT_EQ(compute_device_from_name(bad), std::nullopt) << bad;
  }
}

cli::Args args_of(std::vector<const char*> argv) {
  argv.insert(argv.begin(), {"inferscope-cli", "generate"});
  return cli::Args(cli::model_option_specs(), static_cast<int>(argv.size()), const_cast<char**>(argv.data()), 2);
}

TEST(ComputeDevice, DeviceOptionSetsTheEngineConfigAndNamesABadValue) {
  EXPECT_EQ(cli::engine_config(args_of({})).device, ComputeDevice{});
  EXPECT_EQ(cli::engine_config(args_of({"--device", "cuda:1"})).device, (ComputeDevice{true, 1}));
  try {
    cli::engine_config(args_of({"--device", "tpu"}));
    FAIL() << "--device tpu was accepted";
  } catch (const cli::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'tpu'"), std::string::npos) << e.what();
  }
}

TEST(ComputeDevice, CudaWhereItCannotRunIsAnErrorNeverTheCpu) {
  // a model the CUDA pass takes (heads of 64 dimensions), so that only the device can be missing
  test::SyntheticModelSpec spec;
  spec.dim = 256;
  const std::unique_ptr<LlamaModel> model = test::load_synthetic_model(spec);
  EngineConfig config;
  config.device = ComputeDevice{true, 0};
  try {
    EngineCore core(*model, config, {});
    GTEST_SKIP() << "this build and machine run CUDA: nothing to refuse";
  } catch (const std::exception& e) {
    const std::string what = e.what();
#ifdef INFERSCOPE_TEST_CUDA_BUILD
    EXPECT_NE(what.find("--device cuda:0: no CUDA device"), std::string::npos) << what;
#else
    EXPECT_EQ(what, "--device cuda:0: this build has no CUDA support (INFERSCOPE_CUDA=OFF)");
#endif
  }
}

// bench's "backends" names where the steps ran: a CUDA run is no CPU kernel family.
TEST(ComputeDevice, BenchNamesTheBackendItsStepsRanOn) {
  EngineConfig config;
  EXPECT_EQ(cli::bench_backend("cuda:1", config), "CUDA cuda:1 act f32");
  config.forward.matmul.activations = ActivationPrecision::Q8;
  config.quant = WeightQuant::Q8;
  EXPECT_EQ(cli::bench_backend("cuda:0", config), "CUDA cuda:0 act q8 weights q8");
  const std::string cpu = cli::bench_backend("cpu", config);
  EXPECT_TRUE(cpu.starts_with("CPU ")) << cpu;
  EXPECT_TRUE(cpu.ends_with(" act q8 weights q8")) << cpu;
}

}  // namespace
}  // namespace inferscope
