// serve-sim on real models: the engine's batched, scheduled (and preempted) greedy generation gives
// every request exactly the tokens it gets alone, with either KV manager; the CLI reports what it should.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/engine/prompt.h"
#include "core/kv/kv_config.h"
#include "core/model/llama_model.h"
#include "core/sample/sampler.h"
#include "core/workload/workload_runner.h"
#include "tests/support/cli_runner.h"
#include "tests/support/engine_runs.h"
#include "tests/support/test_models.h"

namespace inferscope {
namespace {

struct Prompt {
  const char* text;
  int32_t output_tokens;
};
const Prompt kPrompts[] = {{"Once upon a time", 40}, {"Lily and Tom", 25}, {"The little dog", 60},
                           {"One day", 33},          {"The sun was", 50},  {"Sam had a big", 45}};

// What each prompt generates alone: greedy, one sequence, contiguous cache, stopping at EOS.
std::vector<TokenId> alone(const LlamaModel& model, const std::vector<TokenId>& prompt, int32_t n) {
  EngineConfig config;
  config.kv.kind = KvKind::Contiguous;
  config.threads = 1;
  return test::engine_greedy(model, config, prompt, n).tokens;
}

struct KvCase {
  const char* name;
  KvConfig config;
  bool expect_preemption;
};

class ServeSimBatchInvariance : public ::testing::TestWithParam<KvCase> {};

TEST_P(ServeSimBatchInvariance, EveryRequestGetsItsAloneTokens) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  EngineConfig config;
  config.kv = GetParam().config;
  config.kv.budget_bytes *= model->kv_geometry(DType::F16).bytes_per_token();  // the cases give their budget in tokens
  config.threads = 2;

  std::vector<Request> requests;
  for (size_t i = 0; i < std::size(kPrompts); ++i) {
    Request r;
    r.id = static_cast<RequestId>(i);
    r.tokens = encode_prompt(*model, kPrompts[i].text);
    r.prompt_tokens = static_cast<int32_t>(r.tokens.size());
    r.max_output_tokens = kPrompts[i].output_tokens;
    requests.push_back(r);
  }
  const WorkloadResult result = run_workload(*model, config, requests);  // greedy, stopping at EOS as generate()

  EXPECT_EQ(result.summary.requests_finished, static_cast<int32_t>(std::size(kPrompts)));
  EXPECT_GT(result.summary.max_concurrent_requests, 1);
  if (GetParam().expect_preemption) {
    EXPECT_GT(result.summary.num_preemptions, 0);
  }
  for (size_t i = 0; i < std::size(kPrompts); ++i) {
    const std::vector<TokenId>& output = result.outputs[i].tokens;
    EXPECT_EQ(output, alone(*model, requests[i].tokens, kPrompts[i].output_tokens))
        << "request " << i << " (\"" << kPrompts[i].text << "\")";
    EXPECT_GT(output.size(), 10u);
  }
}

KvConfig kv(KvKind kind, int32_t block_size, int32_t budget_tokens, int32_t max_seq_len = 0) {
  KvConfig c;
  c.kind = kind;
  c.block_size = block_size;
  c.budget_bytes = static_cast<size_t>(budget_tokens);
  c.max_seq_len = max_seq_len;
  return c;
}

INSTANTIATE_TEST_SUITE_P(
    Managers, ServeSimBatchInvariance,
    ::testing::Values(KvCase{"contiguous", kv(KvKind::Contiguous, 16, 4 * 128, 128), false},
                      KvCase{"paged16", kv(KvKind::Paged, 16, 1024), false},
                      // 12 blocks of 8 for six requests of up to 64 tokens: requests are preempted and recomputed.
                      KvCase{"paged8_preempting", kv(KvKind::Paged, 8, 96), true}),
    [](const ::testing::TestParamInfo<KvCase>& param) { return std::string(param.param.name); });

using test::CliRun;

// Runs inferscope-cli; stderr is kept only when `with_stderr`.
CliRun cli(const std::string& args, bool with_stderr = false) {
  return test::run_cli(INFERSCOPE_CLI, args, with_stderr ? test::Stderr::Joined : test::Stderr::Dropped);
}

nlohmann::json serve_json(const std::string& args) {
  const CliRun r = cli("serve-sim " + args + " --json");
  EXPECT_EQ(r.exit_code, 0) << args;
  return nlohmann::json::parse(r.out);
}

TEST(ServeSimCli, JsonHasEveryRequiredKeyInRange) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  for (const char* manager : {"paged", "contiguous --max-seq-len 64"}) {
    const auto j = serve_json("--model " + path + " --generate-workload 6 --prompt-len 4:24 --output-len 4:24 " +
                              "--kv-budget-mib 1 --kv " + manager);
    for (const char* key : {"kv_cache_usage_perc_peak", "kv_cache_usage_perc_mean", "kv_internal_fragmentation_perc_mean",
                            "kv_reserved_unused_perc_mean", "prefix_cache_hit_rate"}) {
      ASSERT_TRUE(j.contains(key)) << key;
      EXPECT_GE(j[key].get<double>(), 0.0) << key;
      EXPECT_LE(j[key].get<double>(), 1.0) << key;
    }
    for (const char* key : {"max_concurrent_requests", "num_preemptions", "tokens_per_second",
                            "time_to_first_token_seconds_p50", "time_to_first_token_seconds_p99", "requests_finished",
                            "prefill_tokens", "requests_refused", "steps", "duration_s"}) {
      ASSERT_TRUE(j.contains(key)) << key;
      EXPECT_GE(j[key].get<double>(), 0.0) << key;
    }
    EXPECT_EQ(j["requests_finished"], 6);
    EXPECT_EQ(j["max_concurrent_requests"], 6) << "1 MiB holds all six at once";
    EXPECT_GT(j["kv_cache_usage_perc_peak"].get<double>(), 0.0);
    EXPECT_GT(j["tokens_per_second"].get<double>(), 0.0);
    EXPECT_GT(j["time_to_first_token_seconds_p50"].get<double>(), 0.0);
    EXPECT_LE(j["time_to_first_token_seconds_p50"].get<double>(), j["time_to_first_token_seconds_p99"].get<double>());
    EXPECT_EQ(j["requests"].size(), 6u);
  }
}

TEST(ServeSimCli, OversizedRequestsAreRefusedWithAReason) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  // stories260K's context is 2048 tokens; 4 MiB of paged KV would hold 6553.
  const std::string args = "--model " + path + " --kv-budget-mib 4 --dry-run --generate-workload ";
  const auto j = serve_json(args + "3 --prompt-len 2100:2100 --output-len 4:4");
  EXPECT_EQ(j["requests_refused"], 3);
  EXPECT_EQ(j["requests_finished"], 0);
  EXPECT_EQ(j["requests"][0]["finish_reason"], "error");
  EXPECT_NE(j["requests"][0]["error"].get<std::string>().find("context length (2048)"), std::string::npos);
  const CliRun text = cli("serve-sim " + args + "1 --prompt-len 2100 --output-len 4");
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("refused         request 0: the prompt of 2100 tokens leaves no room"), std::string::npos)
      << text.out;
}

TEST(ServeSimCli, MetricsJsonHoldsTheEngineTimeline) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const std::string file = (std::filesystem::temp_directory_path() / "inferscope_serve_sim_timeline.json").string();
  const CliRun r = cli("serve-sim --model " + path + " --generate-workload 5 --prompt-len 8:40 --output-len 6:20 " +
                       "--max-batch-tokens 16 --metrics-json " + file);
  ASSERT_EQ(r.exit_code, 0);
  std::ifstream in(file);
  const auto j = nlohmann::json::parse(in);
  std::filesystem::remove(file);
  // Every engine step is there, with the tokens it computed under the 16-token budget.
  ASSERT_EQ(j["step_timeline"].size(), j["steps"].get<size_t>());
  int64_t prefill = 0, decode = 0;
  double previous = 0;
  for (const auto& step : j["step_timeline"]) {
    EXPECT_LE(step["prefill_tokens"].get<int>() + step["decode_tokens"].get<int>(), 16 + 5);
    EXPECT_GT(step["duration_s"].get<double>(), 0.0);
    EXPECT_GE(step["time_s"].get<double>(), previous);
    EXPECT_GT(step["attention_seconds"].get<double>(), 0.0);
    EXPECT_GT(step["matmul_seconds"].get<double>(), 0.0);
    EXPECT_LE(step["attention_seconds"].get<double>() + step["matmul_seconds"].get<double>(),
              step["duration_s"].get<double>());
    previous = step["time_s"].get<double>();
    prefill += step["prefill_tokens"].get<int64_t>();
    decode += step["decode_tokens"].get<int64_t>();
  }
  EXPECT_EQ(prefill, j["prefill_tokens"].get<int64_t>());
  EXPECT_EQ(decode, j["decode_tokens"].get<int64_t>());
  // Every request, with each inter-token latency and its text.
  ASSERT_EQ(j["requests"].size(), 5u);
  for (const auto& q : j["requests"]) {
    EXPECT_EQ(q["finish_reason"], "length");
    EXPECT_EQ(q["inter_token_latency_seconds"].size(), q["generation_tokens"].get<size_t>() - 1);
    EXPECT_FALSE(q["text"].get<std::string>().empty());
  }
}

TEST(ServeSimCli, DemoModelShowsPagingAndPrefixCaching) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const std::string workloads = std::string(INFERSCOPE_SOURCE_DIR) + "/resources/workloads/";
  const std::string mixed = "--model " + path + " --workload " + workloads + "mixed.json --dry-run --kv-budget-mib 96";
  const auto contiguous = serve_json(mixed + " --kv contiguous --max-seq-len 2048");
  const auto paged = serve_json(mixed + " --kv paged");
  // From mixed.json: a request needs 64 to 764 slots (mean 446), contiguous reserves 2048 (>= 63% unused);
  // paged leaves about half a block of 16 per sequence unfilled (8 / 446 = 1.8%) and so fits ~4x more.
  EXPECT_GT(contiguous["kv_reserved_unused_perc_mean"].get<double>(), 0.5);
  EXPECT_LT(paged["kv_internal_fragmentation_perc_mean"].get<double>(), 0.05);
  EXPECT_GE(paged["max_concurrent_requests"].get<int>(), 2 * contiguous["max_concurrent_requests"].get<int>());
  EXPECT_EQ(paged["requests_finished"], 32);

  const std::string shared = "--model " + path + " --workload " + workloads + "shared_system_prompt.json --dry-run";
  const auto on = serve_json(shared + " --prefix-cache on");
  const auto off = serve_json(shared + " --prefix-cache off");
  // From shared_system_prompt.json: 768 of each 841-token prompt are the shared prefix (48 whole
  // blocks), so every request after the first can skip 91% of its prefill.
  EXPECT_GT(on["prefix_cache_hit_rate"].get<double>(), 0.5);
  EXPECT_EQ(off["prefix_cache_hit_rate"].get<double>(), 0.0);
  EXPECT_LT(on["prefill_tokens"].get<double>(), 0.5 * off["prefill_tokens"].get<double>());
  EXPECT_LT(on["time_to_first_token_seconds_p50"].get<double>(), off["time_to_first_token_seconds_p50"].get<double>());
}

// --device-profile prices the dry run on a device's roofline: the same workload, the same tokens,
// and on an H200 it ends thousands of times sooner than on the linear CPU model; a name resolves to
// resources/devices/NAME.json from the working directory.
TEST(ServeSimCli, DeviceProfilePricesTheDryRun) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const std::string run = "--model " + path + " --generate-workload 8 --prompt-len 16:32 --output-len 8:16 --dry-run";
  const auto cpu = serve_json(run);
  const std::string h200_path = std::string(INFERSCOPE_SOURCE_DIR) + "/resources/devices/h200.json";
  const auto h200 = serve_json(run + " --device-profile " + h200_path);
  EXPECT_EQ(cpu["config"]["device"], "the linear CPU model");
  EXPECT_EQ(h200["config"]["device"], "NVIDIA H200 SXM (141 GB)");
  EXPECT_EQ(h200["config"]["device_bandwidth_bytes_per_s"], 4.8e12);
  EXPECT_TRUE(h200["config"]["step_fixed_s"].is_null());
  EXPECT_EQ(h200["output_tokens"], cpu["output_tokens"]);
  EXPECT_EQ(h200["steps"], cpu["steps"]);
  EXPECT_GT(cpu["duration_s"].get<double>(), 1000 * h200["duration_s"].get<double>());
  // by name, from the source tree as working directory
  const CliRun by_name = test::run_cli("cd " + std::string(INFERSCOPE_SOURCE_DIR) + " && " + INFERSCOPE_CLI,
                                       "serve-sim " + run + " --device-profile rtx-4090 --json", test::Stderr::Dropped);
  ASSERT_EQ(by_name.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(by_name.out)["config"]["device"], "NVIDIA GeForce RTX 4090 (24 GB)");
  // refused: without --dry-run, with the linear flags, an unknown name
  const CliRun real = cli("serve-sim " + run.substr(0, run.size() - 10) + " --device-profile h200", true);
  EXPECT_EQ(real.exit_code, 2);
  EXPECT_NE(real.out.find("model a step of the --dry-run only"), std::string::npos) << real.out;
  const CliRun both = cli("serve-sim " + run + " --device-profile h200 --step-fixed-ms 2", true);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.out.find("drop --step-fixed-ms"), std::string::npos) << both.out;
  const CliRun unknown = cli("serve-sim " + run + " --device-profile /nonexistent/tpu.json", true);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.out.find("--device-profile: /nonexistent/tpu.json: cannot read the device profile"), std::string::npos)
      << unknown.out;
}

// --model-shape runs the dry run with no model file: the SmolLM2-135M shape at q8 prices every step
// as the demo model converted to q8 does; --tensor-parallel halves one device's weights; the flags
// that cannot go together, a bad shape file, text prompts and a model too big for the device are refused.
TEST(ServeSimCli, ModelShapeRunsTheDryRunWithoutAFile) {
  INFERSCOPE_REQUIRE_FILE(path, test::demo_model_path());
  const std::string shapes = std::string(INFERSCOPE_SOURCE_DIR) + "/resources/model-shapes/";
  const std::string h200 = " --device-profile " + std::string(INFERSCOPE_SOURCE_DIR) + "/resources/devices/h200.json";
  const std::string run = " --generate-workload 6 --prompt-len 16:64 --output-len 4:12 --dry-run" + h200;
  const auto from_file = serve_json("--model " + path + " --quant q8" + run);
  const auto from_shape = serve_json("--model-shape " + shapes + "smollm2-135m.json --weights-type q8" + run);
  EXPECT_EQ(from_shape["flops"], from_file["flops"]);
  EXPECT_EQ(from_shape["bytes_read"], from_file["bytes_read"]);
  EXPECT_EQ(from_shape["duration_s"], from_file["duration_s"]);
  EXPECT_EQ(from_shape["config"]["model_shape"], "SmolLM2-135M");
  EXPECT_EQ(from_shape["config"]["weight_bytes_per_device"], from_file["config"]["weight_bytes_per_device"]);
  EXPECT_EQ(from_shape["config"]["fits_device_memory"], true);

  const std::string llama8 = "--model-shape " + shapes + "llama-3-8b.json" + run;
  const auto tp1 = serve_json(llama8 + " --kv-budget-mib 1024");
  const auto tp2 = serve_json(llama8 + " --kv-budget-mib 1024 --tensor-parallel 2");
  EXPECT_DOUBLE_EQ(tp1["config"]["weight_bytes_per_device"].get<double>(), 2 * 8029995008.0);
  EXPECT_DOUBLE_EQ(tp2["config"]["weight_bytes_per_device"].get<double>(), 8029995008.0);
  EXPECT_EQ(tp2["config"]["kv_budget_bytes_per_device"], 1024.0 * 1024 * 1024);  // --kv-budget-mib is per device
  EXPECT_EQ(tp2["config"]["device_link"], "NVLink 4");
  EXPECT_LT(tp2["duration_s"].get<double>(), tp1["duration_s"].get<double>());

  const auto refused = [&](const std::string& args, const std::string& message) {
    const CliRun r = cli("serve-sim " + args, true);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.out.find(message), std::string::npos) << args << "\n" << r.out;
  };
  refused("--model " + path + " " + llama8, "give either --model FILE or --model-shape NAME, not both");
  refused("--model-shape llama-3-8b --generate-workload 1 --prompt-len 4 --output-len 4", "it needs --dry-run");
  refused(llama8 + " --weights-type q3", "--weights-type: weights type 'q3' is not one of bf16, f32");
  refused(llama8 + " --quant q8", "a --model-shape has --weights-type");
  refused(llama8 + " --tensor-parallel 3", "--tensor-parallel: tensor parallelism over 3 devices: the model's 32 attention heads do not divide by 3");
  refused(llama8 + " --tensor-parallel 16", "the model's 8 KV heads do not divide by 16");
  refused("--model-shape " + shapes + "llama-3-70b.json" + run, "the model's weights (131.41 GiB) exceed the memory of 1 x NVIDIA H200");
  refused(llama8 + " --kv-budget-mib 130000", "lower --kv-budget-mib");
  const std::string bad = ::testing::TempDir() + "/bad_shape.json";
  std::ofstream(bad) << R"({"name": "x", "source": "s", "layers": -2})";
  refused("--model-shape " + bad + run, "--model-shape: " + bad + ": field 'layers' must be positive (and below 2^31), not -2");
  refused("--model-shape " + shapes + "smollm2-135m.json --workload " + std::string(INFERSCOPE_SOURCE_DIR) +
              "/resources/workloads/mixed.json --dry-run",
          "prompts must be token counts (\"prompt_tokens\"), not text");
}

// Short names of shipped device profiles and model shapes are found from any working directory: the
// build's program reads the source tree's resources/ (an installed one reads ../share/inferscope).
TEST(ServeSimCli, ShortNamesWorkFromAnyWorkingDirectory) {
  const std::string elsewhere = ::testing::TempDir();
  const CliRun r = test::run_cli("cd '" + elsewhere + "' && " + std::string(INFERSCOPE_CLI),
                                 "serve-sim --model-shape llama-3-8b --dry-run --device-profile h200 --generate-workload 4 "
                                 "--prompt-len 64:64 --output-len 8:8 --json",
                                 test::Stderr::Joined);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  EXPECT_EQ(j["requests_finished"], 4) << r.out;
  // The device's memory sizes the cache, as vLLM does: 90% of it, less the weights (bf16 Llama-3-8B).
  const double memory = j["config"]["device_memory_bytes"].get<double>(), weights = j["config"]["weight_bytes_per_device"].get<double>();
  EXPECT_NEAR(j["config"]["kv_budget_bytes"].get<double>(), 0.9 * memory - weights, 1.0);
  EXPECT_EQ(j["config"]["device"], "NVIDIA H200 SXM (141 GB)");
}

// A device's cache takes what the weights leave of --gpu-memory-utilization of its memory; too little
// for the weights is refused with the way out.
TEST(ServeSimCli, GpuMemoryUtilizationSizesADevicesCache) {
  const std::string run = " --dry-run --device-profile h200 --generate-workload 4 --prompt-len 64:64 --output-len 8:8";
  const nlohmann::json half = serve_json("--model-shape llama-3-8b" + run + " --gpu-memory-utilization 0.5");
  const double memory = half["config"]["device_memory_bytes"].get<double>();
  const double weights = half["config"]["weight_bytes_per_device"].get<double>();
  EXPECT_NEAR(half["config"]["kv_budget_bytes"].get<double>(), 0.5 * memory - weights, 1.0);
  const CliRun tight = cli("serve-sim --model-shape llama-3-8b" + run + " --gpu-memory-utilization 0.1", true);
  EXPECT_EQ(tight.exit_code, 2);
  EXPECT_NE(tight.out.find("leave no room for a KV cache in 10% of NVIDIA H200 SXM (141 GB)'s memory"), std::string::npos)
      << tight.out;
  const CliRun cpu = cli("serve-sim --model-shape llama-3-8b --dry-run --generate-workload 1 --prompt-len 4 --output-len 4 "
                         "--gpu-memory-utilization 0.5", true);
  EXPECT_EQ(cpu.exit_code, 2);
  EXPECT_NE(cpu.out.find("--gpu-memory-utilization sizes the KV cache of a --dry-run on a --device-profile"), std::string::npos)
      << cpu.out;
  // Both ways of sizing the cache at once: one would be ignored, so neither is taken.
  const CliRun both = cli("serve-sim --model-shape llama-3-8b" + run + " --gpu-memory-utilization 0.5 --kv-budget-mib 4096", true);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.out.find("--gpu-memory-utilization and --kv-budget-mib both size the KV cache: give one"), std::string::npos)
      << both.out;
}

TEST(ServeSimCli, BadInputExitsTwoWithAClearMessage) {
  INFERSCOPE_REQUIRE_FILE(path, test::shared_model_path("stories260K.gguf"));
  const std::string model = "serve-sim --model " + path;
  const CliRun neither = cli(model, true);
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_NE(neither.out.find("--workload FILE and --generate-workload N"), std::string::npos) << neither.out;
  const CliRun range = cli(model + " --generate-workload 2 --prompt-len 9:3 --output-len 4", true);
  EXPECT_EQ(range.exit_code, 2);
  EXPECT_NE(range.out.find("--prompt-len"), std::string::npos) << range.out;
  const CliRun cost = cli(model + " --generate-workload 2 --prompt-len 3 --output-len 4 --step-fixed-ms 2", true);
  EXPECT_EQ(cost.exit_code, 2);
  EXPECT_NE(cost.out.find("--dry-run"), std::string::npos) << cost.out;

  const std::string bad = (std::filesystem::temp_directory_path() / "inferscope_serve_sim_bad.json").string();
  std::ofstream(bad) << R"({"requests": [{"prompt_tokens": 4, "output_tokens": 4}, {"prompt_tokens": 4}]})";
  const CliRun malformed = cli(model + " --workload " + bad, true);
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_NE(malformed.out.find(bad + ": request 1: \"output_tokens\" is missing"), std::string::npos) << malformed.out;
  std::filesystem::remove(bad);
}

}  // namespace
}  // namespace inferscope
