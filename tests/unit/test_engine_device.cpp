// The engine's device on stories260K: a device that fails mid-step ends that step's requests with the
// device's message and leaves the engine serving on the CPU (the golden text, the snapshot saying
// why), unless the error left the device usable (out of memory) and steps do not keep failing so; a
// device switch between steps is applied like a quantization level, or refused with the factory's
// reason; each step reports its matmul time beside its attention time. The failing
// "device" is a test forward pass (the CPU's, behind the engine's forward-pass seam) that throws
// DeviceFailure, as the CUDA forward pass does when a CUDA call fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/engine/engine_core.h"
#include "core/engine/prompt.h"
#include "core/model/device_failure.h"
#include "core/model/llama_model.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

// tests/models/README.md: the first 32 ids generated greedily from BOS.
const std::vector<TokenId> kStoriesGolden = {403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315,
                                             421, 395, 317, 426, 338, 401, 396, 267, 337, 410, 408,
                                             419, 292, 411, 322, 265, 282, 295, 433, 426, 385};

const char kCudaMessage[] = "cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost) failed at cuda_forward.cpp:1: "
                            "cudaErrorIllegalAddress (an illegal memory access was encountered)";
const char kOutOfMemory[] = "cudaMalloc(&p, n) failed at device_allocation.h:1: cudaErrorMemoryAllocation (out of memory)";
const DeviceMemory kDeviceMemory{1000, 200, 30};

// A "device" that computes as the CPU does and throws on its `fail_at`-th run and the `fail_runs` - 1
// after it (counted over every forward pass the maker builds): DeviceFailure (of a lost device, or
// with `context_usable` out of memory), or with `bad_input` the std::invalid_argument of a bad token.
struct TestDevice {
  int32_t fail_at = 0;  // 0: never
  bool bad_input = false;
  bool context_usable = false;
  int32_t fail_runs = 1;
  std::set<int32_t> refuse_builds{};  // the builds of this device's forward pass that it refuses (1: the first)
  int32_t runs = 0;
  int32_t builds = 0;      // forward passes built for this device
  int32_t cpu_builds = 0;  // and for the CPU
  int32_t alive = 0;       // this device's forward passes that exist now (each holds its weights there)
  int32_t most_alive = 0;  // and the most at once

  class Forward final : public ForwardPass {
   public:
    Forward(std::unique_ptr<ForwardPass> cpu, TestDevice& device) : cpu_(std::move(cpu)), device_(device) {
      device_.most_alive = std::max(device_.most_alive, ++device_.alive);
    }
    ~Forward() override { --device_.alive; }
    ForwardStats run(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention, ThreadPool& pool,
                     std::vector<float>& logits, int32_t layers) override {
      if (++device_.runs >= device_.fail_at && device_.fail_at > 0 && device_.runs < device_.fail_at + device_.fail_runs) {
        if (device_.bad_input) throw std::invalid_argument("token 9999 is outside the vocabulary");
        if (device_.context_usable) throw DeviceFailure(std::string("cuda:0: ") + kOutOfMemory, false);
        throw DeviceFailure(std::string("cuda:0: ") + kCudaMessage);
      }
      return cpu_->run(batch, kv, attention, pool, logits, layers);
    }
    std::optional<DeviceMemory> device_memory() const override { return kDeviceMemory; }

   private:
    std::unique_ptr<ForwardPass> cpu_;
    TestDevice& device_;
  };

  // The CPU's forward pass for the CPU, this device's for any CUDA device.
  ForwardMaker maker() {
    return [this](const LlamaModel& model, const LlamaWeights& weights, const ForwardOptions& options,
                  const ComputeDevice& device) -> std::unique_ptr<ForwardPass> {
      std::unique_ptr<ForwardPass> cpu = make_forward(model, weights, options, ComputeDevice{});
      if (!device.cuda) {
        ++cpu_builds;
        return cpu;
      }
      if (refuse_builds.contains(++builds)) {
        throw std::invalid_argument("--device cuda:0: the test device cannot run this model");
      }
      return std::make_unique<Forward>(std::move(cpu), *this);
    };
  }
};

const LlamaModel& stories() {
  static const std::unique_ptr<LlamaModel> m = LlamaModel::load(test::shared_model_path("stories260K.gguf"));
  return *m;
}

// What the callbacks delivered, per request.
struct Recorder {
  std::map<RequestId, std::vector<TokenId>> tokens;
  std::map<RequestId, StopReason> finished;
  std::map<RequestId, std::string> errors;
  std::vector<std::string> configs;

  EngineCallbacks callbacks() {
    EngineCallbacks c;
    c.on_token = [this](RequestId id, std::string_view, TokenId token, const TokenTiming&) {
      if (token >= 0) tokens[id].push_back(token);
    };
    c.on_finished = [this](RequestId id, StopReason reason) { finished[id] = reason; };
    c.on_error = [this](RequestId id, const std::string& message) { errors[id] = message; };
    c.on_config = [this](bool applied, const std::string& note) {
      configs.push_back((applied ? "applied: " : "rejected: ") + note);
    };
    return c;
  }
};

EngineConfig config_on(const ComputeDevice& device) {
  EngineConfig c;
  c.threads = 1;
  c.device = device;
  return c;
}

EngineRequest from_bos(int32_t max_tokens = 32) {
  EngineRequest r;
  r.prompt_tokens = encode_prompt(stories(), "");
  r.max_tokens = max_tokens;
  return r;
}

void run_until_idle(EngineCore& core) {
  for (int i = 0; i < 1000 && core.has_work(); ++i) core.step();
  ASSERT_FALSE(core.has_work());
}

constexpr ComputeDevice kCuda0{true, 0};

class EngineDevice : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(test::model_file_exists(test::shared_model_path("stories260K.gguf"))); }
};

TEST_F(EngineDevice, AFailedDeviceEndsItsStepsRequestsAndTheEngineServesOnTheCpu) {
  Recorder got;
  TestDevice device{.fail_at = 3};
  EngineCoreOptions options;
  options.forward_maker = device.maker();
  EngineConfig config = config_on(kCuda0);
  config.scheduler.max_running = 1;  // request 1 waits while request 0 runs
  EngineCore core(stories(), config, got.callbacks(), options);
  EXPECT_EQ(core.metrics().snapshot(core.now()).device, "cuda:0");
  EXPECT_EQ(core.metrics().snapshot(core.now()).device_memory, kDeviceMemory);
  core.add(0, from_bos());
  core.add(1, from_bos());
  for (int i = 0; i < 3; ++i) core.step();  // the prefill, one decode, then the failing run

  // The failing step's request ends with the device's message naming the CUDA call.
  ASSERT_EQ(got.finished.count(0), 1u);
  EXPECT_EQ(got.finished[0], StopReason::Failed);
  EXPECT_EQ(got.errors[0], std::string("step failed: cuda:0: ") + kCudaMessage);
  EXPECT_EQ(got.finished.count(1), 0u);  // waiting: not part of the step
  EXPECT_EQ(core.config().device, ComputeDevice{});
  const EngineMetricsSnapshot after = core.metrics().snapshot(core.now());
  EXPECT_EQ(after.device, "cpu");
  EXPECT_EQ(after.device_fallback, std::string("fell back from cuda:0 after: cuda:0: ") + kCudaMessage);
  EXPECT_EQ(device_line(after), std::string("cpu (fell back from cuda:0 after: cuda:0: ") + kCudaMessage + ")");
  EXPECT_EQ(after.device_memory, std::nullopt);
  ASSERT_EQ(got.configs.size(), 1u);
  EXPECT_EQ(got.configs[0].rfind("applied: device cuda:0 failed (cuda:0: cudaMemcpy", 0), 0u) << got.configs[0];

  // The waiting request and a later one run on the CPU, to the golden text.
  core.add(2, from_bos());
  run_until_idle(core);
  EXPECT_EQ(got.finished[1], StopReason::Length) << got.errors[1];
  EXPECT_EQ(got.tokens[1], kStoriesGolden);
  EXPECT_EQ(got.finished[2], StopReason::Length) << got.errors[2];
  EXPECT_EQ(got.tokens[2], kStoriesGolden);
  EXPECT_EQ(device.runs, 3);  // the failed device never ran again
}

TEST_F(EngineDevice, AStepOutOfDeviceMemoryFailsItsRequestsAndTheEngineStaysOnTheDevice) {
  Recorder got;
  TestDevice device{.fail_at = 3, .context_usable = true};
  EngineCoreOptions options;
  options.forward_maker = device.maker();
  EngineConfig config = config_on(kCuda0);
  config.scheduler.max_running = 1;
  EngineCore core(stories(), config, got.callbacks(), options);
  core.add(0, from_bos());
  core.add(1, from_bos());
  for (int i = 0; i < 3; ++i) core.step();
  EXPECT_EQ(got.finished[0], StopReason::Failed);
  EXPECT_EQ(got.errors[0], std::string("step failed: cuda:0: ") + kOutOfMemory + " (the engine stays on cuda:0)");
  EXPECT_EQ(core.config().device, kCuda0);
  const EngineMetricsSnapshot m = core.metrics().snapshot(core.now());
  EXPECT_EQ(m.device, "cuda:0");
  EXPECT_EQ(m.device_fallback, "");
  EXPECT_TRUE(got.configs.empty());
  // The waiting request and a later one run on the device, to the golden text.
  core.add(2, from_bos());
  run_until_idle(core);
  EXPECT_EQ(got.tokens[1], kStoriesGolden) << got.errors[1];
  EXPECT_EQ(got.tokens[2], kStoriesGolden) << got.errors[2];
  EXPECT_EQ(device.cpu_builds, 0);
  EXPECT_GT(device.runs, 3);
}

TEST_F(EngineDevice, StepsThatKeepFailingOnTheDeviceSendTheEngineToTheCpu) {
  Recorder got;
  const int32_t limit = EngineCore::kDeviceStepFailuresBeforeCpu;
  TestDevice device{.fail_at = 3, .context_usable = true, .fail_runs = limit};
  EngineCoreOptions options;
  options.forward_maker = device.maker();
  EngineConfig config = config_on(kCuda0);
  config.scheduler.max_running = 1;
  EngineCore core(stories(), config, got.callbacks(), options);
  for (RequestId id = 0; id <= limit; ++id) core.add(id, from_bos());
  // The prefill, one decode, then a failing step for each of the first `limit` requests.
  for (int i = 0; i < 2 + limit; ++i) core.step();
  for (RequestId id = 0; id < limit; ++id) EXPECT_EQ(got.finished[id], StopReason::Failed) << id;
  EXPECT_EQ(core.config().device, ComputeDevice{});
  const std::string fallback = core.metrics().snapshot(core.now()).device_fallback;
  EXPECT_NE(fallback.find(" (" + std::to_string(limit) + " steps in a row failed there)"), std::string::npos) << fallback;
  run_until_idle(core);
  EXPECT_EQ(got.tokens[limit], kStoriesGolden) << got.errors[limit];
  EXPECT_EQ(device.runs, 2 + limit);
}

// Steps the core until the background weight conversion that `apply_config` started (its note the
// first) has been swapped in or has failed: its second note.
void finish_conversion(EngineCore& core, const Recorder& got) {
  for (int i = 0; i < 4000 && got.configs.size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    core.step();
  }
  ASSERT_EQ(got.configs.size(), 2u) << "the conversion did not finish";
}

EngineConfig at_level(EngineConfig c, WeightQuant level) {
  c.quant = level;
  return c;
}

TEST_F(EngineDevice, ANewWeightLevelOnTheDeviceFreesTheOldWeightsFirst) {
  Recorder got;
  TestDevice device;
  EngineCoreOptions options;
  options.forward_maker = device.maker();
  EngineCore core(stories(), config_on(kCuda0), got.callbacks(), options);
  core.apply_config(at_level(core.config(), WeightQuant::Q8));
  finish_conversion(core, got);
  EXPECT_EQ(got.configs[1].rfind("applied: weights now q8", 0), 0u) << got.configs[1];
  EXPECT_EQ(core.config().quant, WeightQuant::Q8);
  EXPECT_EQ(core.config().device, kCuda0);
  EXPECT_EQ(device.builds, 2);
  EXPECT_EQ(device.most_alive, 1) << "the old weights' forward pass went before the new one was built";
  core.add(0, from_bos());
  run_until_idle(core);
  EXPECT_EQ(got.finished[0], StopReason::Length) << got.errors[0];
}

TEST_F(EngineDevice, ALevelTheDeviceCannotHoldLeavesTheOldWeightsInUse) {
  Recorder got;
  TestDevice device{.refuse_builds = {2}};  // the new level's build
  EngineCoreOptions options;
  options.forward_maker = device.maker();
  EngineCore core(stories(), config_on(kCuda0), got.callbacks(), options);
  core.apply_config(at_level(core.config(), WeightQuant::Q8));
  finish_conversion(core, got);
  EXPECT_EQ(got.configs[1],
            "rejected: the weights converted to q8 could not be put on cuda:0 (--device cuda:0: the test device "
            "cannot run this model); staying on native");
  EXPECT_EQ(core.config().quant, WeightQuant::Native);
  EXPECT_EQ(core.config().device, kCuda0);
  EXPECT_EQ(core.metrics().snapshot(core.now()).weights_quant, "native");
  EXPECT_EQ(device.builds, 3);  // the first, the refused one, the old weights again
  EXPECT_EQ(device.most_alive, 1);
  core.add(0, from_bos());
  run_until_idle(core);
  EXPECT_EQ(got.tokens[0], kStoriesGolden) << got.errors[0];
  EXPECT_EQ(device.cpu_builds, 0);
}

TEST_F(EngineDevice, WhenNotEvenTheOldWeightsFitAgainTheyRunOnTheCpu) {
  Recorder got;
  TestDevice device{.refuse_builds = {2, 3}};
  EngineCoreOptions options;
  options.forward_maker = device.maker();
  EngineCore core(stories(), config_on(kCuda0), got.callbacks(), options);
  core.apply_config(at_level(core.config(), WeightQuant::Q8));
  finish_conversion(core, got);
  EXPECT_NE(got.configs[1].find("the old weights could not be put back either"), std::string::npos) << got.configs[1];
  EXPECT_EQ(core.config().device, ComputeDevice{});
  EXPECT_EQ(core.config().quant, WeightQuant::Native);
  const EngineMetricsSnapshot m = core.metrics().snapshot(core.now());
  EXPECT_EQ(m.device, "cpu");
  EXPECT_EQ(m.device_fallback.rfind("fell back from cuda:0 after: ", 0), 0u) << m.device_fallback;
  core.add(0, from_bos());
  run_until_idle(core);
  EXPECT_EQ(got.tokens[0], kStoriesGolden) << got.errors[0];
  EXPECT_EQ(device.alive, 0);
}

TEST_F(EngineDevice, ANonDeviceErrorFailsTheRequestAndKeepsTheDevice) {
  Recorder got;
  TestDevice device{.fail_at = 2, .bad_input = true};
  EngineCoreOptions options;
  options.forward_maker = device.maker();
  EngineCore core(stories(), config_on(kCuda0), got.callbacks(), options);
  core.add(0, from_bos());
  core.step();
  core.step();
  EXPECT_EQ(got.finished[0], StopReason::Failed);
  EXPECT_EQ(got.errors[0], "step failed: token 9999 is outside the vocabulary");
  EXPECT_EQ(core.config().device, kCuda0);
  const EngineMetricsSnapshot m = core.metrics().snapshot(core.now());
  EXPECT_EQ(m.device, "cuda:0");
  EXPECT_EQ(m.device_fallback, "");
  EXPECT_TRUE(got.configs.empty());

  core.add(1, from_bos());
  run_until_idle(core);
  EXPECT_EQ(got.tokens[1], kStoriesGolden);
  EXPECT_GT(device.runs, 2);  // still on the device
}

// stories260K's own f32 weights drafted for by themselves at q8, three tokens a step.
EngineConfig self_quant_on(const ComputeDevice& device) {
  EngineConfig c = config_on(device);
  c.spec.mode = SpecMode::SelfQuant;
  c.spec.draft_quant = WeightQuant::Q8;
  c.spec.k = 3;
  return c;
}

TEST_F(EngineDevice, AModelDraftRunsOnTheTargetsDeviceAndFollowsItToTheCpu) {
  Recorder got;
  TestDevice device{.fail_at = 6};
  EngineCoreOptions options;
  options.forward_maker = device.maker();
  EngineCore core(stories(), self_quant_on(kCuda0), got.callbacks(), options);
  EXPECT_EQ(device.builds, 2);  // the target's forward pass and the draft's, both on the device
  EXPECT_EQ(device.cpu_builds, 0);
  core.add(0, from_bos());
  run_until_idle(core);
  // The draft's runs failed the device too: the engine and its draft moved to the CPU together.
  EXPECT_EQ(device.runs, 6);
  EXPECT_EQ(got.finished[0], StopReason::Failed);
  EXPECT_EQ(core.config().device, ComputeDevice{});
  EXPECT_EQ(device.cpu_builds, 2);
  core.add(1, from_bos());
  run_until_idle(core);
  EXPECT_EQ(got.finished[1], StopReason::Length) << got.errors[1];
  EXPECT_EQ(got.tokens[1], kStoriesGolden);
  EXPECT_GT(core.metrics().snapshot(core.now()).spec.num_draft_tokens, 0);
  EXPECT_EQ(device.runs, 6);
}

TEST_F(EngineDevice, ADeviceThatCannotRunTheDraftRefusesTheSwitchWithItsReason) {
  Recorder got;
  TestDevice device{.refuse_builds = {1}};  // the draft's forward pass is built first
  EngineCoreOptions options;
  options.forward_maker = device.maker();
  EngineCore core(stories(), self_quant_on(ComputeDevice{}), got.callbacks(), options);
  core.add(0, from_bos());
  for (int i = 0; i < 3; ++i) core.step();
  core.apply_config(self_quant_on(kCuda0));
  ASSERT_EQ(got.configs.size(), 1u);
  EXPECT_EQ(got.configs[0], "rejected: config rejected: --device cuda:0: the test device cannot run this model");
  EXPECT_EQ(core.config().device, ComputeDevice{});
  run_until_idle(core);
  EXPECT_EQ(got.tokens[0], kStoriesGolden);
  EXPECT_EQ(device.runs, 0);
}

TEST_F(EngineDevice, SwitchingToTheDeviceItRunsOnIsANoOp) {
  Recorder got;
  EngineCore core(stories(), config_on(ComputeDevice{}), got.callbacks());
  core.add(0, from_bos());
  for (int i = 0; i < 4; ++i) core.step();
  core.apply_config(core.config());
  ASSERT_EQ(got.configs.size(), 1u);
  EXPECT_EQ(got.configs[0], "applied: no change");
  run_until_idle(core);
  EXPECT_EQ(got.tokens[0], kStoriesGolden);
  EXPECT_EQ(core.metrics().snapshot(core.now()).num_preemptions, 0);
}

TEST_F(EngineDevice, CudaWhereItCannotRunIsRefusedWithTheReasonAndTheEngineStays) {
  Recorder got;
  EngineCore core(stories(), config_on(ComputeDevice{}), got.callbacks());
  core.add(0, from_bos());
  for (int i = 0; i < 4; ++i) core.step();
  core.apply_config(config_on(kCuda0));
  ASSERT_EQ(got.configs.size(), 1u);
  const std::string& note = got.configs[0];
  EXPECT_EQ(note.rfind("rejected: config rejected: --device cuda:0: ", 0), 0u) << note;
  EXPECT_TRUE(note.find("no CUDA device") != std::string::npos || note.find("no CUDA support") != std::string::npos)
      << note;
  EXPECT_EQ(core.config().device, ComputeDevice{});
  EXPECT_EQ(core.metrics().snapshot(core.now()).device, "cpu");
  run_until_idle(core);
  EXPECT_EQ(got.tokens[0], kStoriesGolden);
  EXPECT_EQ(core.metrics().snapshot(core.now()).num_preemptions, 0);
}

TEST_F(EngineDevice, ASwitchBetweenStepsRecomputesTheRunningRequestsOnTheNewDevice) {
  Recorder got;
  TestDevice device;
  EngineCoreOptions options;
  options.forward_maker = device.maker();
  EngineCore core(stories(), config_on(ComputeDevice{}), got.callbacks(), options);
  core.add(0, from_bos());
  for (int i = 0; i < 4; ++i) core.step();
  core.apply_config(config_on(kCuda0));
  ASSERT_EQ(got.configs.size(), 1u);
  EXPECT_EQ(got.configs[0], "applied: device cuda:0: new KV cache; 1 running requests recomputed on cuda:0");
  EXPECT_EQ(core.config().device, kCuda0);
  EngineMetricsSnapshot m = core.metrics().snapshot(core.now());
  EXPECT_EQ(m.device, "cuda:0");
  EXPECT_EQ(m.device_memory, kDeviceMemory);
  EXPECT_EQ(m.num_preemptions, 1);
  for (int i = 0; i < 4; ++i) core.step();
  EXPECT_GT(device.runs, 0);
  core.apply_config(config_on(ComputeDevice{}));  // and back
  EXPECT_EQ(got.configs.back(), "applied: device cpu: new KV cache; 1 running requests recomputed on cpu");
  const int32_t device_runs = device.runs;
  run_until_idle(core);
  EXPECT_EQ(device.runs, device_runs);
  EXPECT_EQ(got.tokens[0], kStoriesGolden);
  m = core.metrics().snapshot(core.now());
  EXPECT_EQ(m.device, "cpu");
  EXPECT_EQ(m.device_memory, std::nullopt);
}

TEST_F(EngineDevice, EachStepReportsItsMatmulTimeWithinTheStep) {
  Recorder got;
  EngineCore core(stories(), config_on(ComputeDevice{}), got.callbacks());
  core.add(0, from_bos(8));
  run_until_idle(core);
  const EngineMetricsSnapshot m = core.metrics().snapshot(core.now());
  ASSERT_FALSE(m.steps.empty());
  for (const StepMetrics& step : m.steps) {
    EXPECT_GT(step.matmul_seconds, 0);
    EXPECT_GT(step.attention_seconds, 0);
    EXPECT_LE(step.attention_seconds + step.matmul_seconds, step.duration_s);
  }
}

}  // namespace
}  // namespace inferscope
