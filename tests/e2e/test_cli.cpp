// inferscope-cli as a user runs it: output, JSON fields, and exit codes for bad input.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/gguf/gguf_file.h"
#include "core/gguf/gguf_writer.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/large_pages.h"
#include "kernels/cpu/matmul/matmul.h"
#include "tests/support/cli_runner.h"
#ifdef INFERSCOPE_HAVE_CUDA
#include "kernels/cuda/cuda_check.h"
#endif
#include "tests/support/synthetic_model.h"
#include "tests/support/test_models.h"

namespace {

using inferscope::test::CliRun;

// Runs inferscope-cli with `args`; stderr joins stdout unless `keep_stderr_apart`.
CliRun cli(const std::string& args, bool keep_stderr_apart = false) {
  using inferscope::test::Stderr;
  return inferscope::test::run_cli(INFERSCOPE_CLI, args, keep_stderr_apart ? Stderr::Dropped : Stderr::Joined);
}

std::string stdout_only(const std::string& args) {
  return cli(args, true).out;
}

TEST(Cli, GenerateJsonCarriesTokensAndMetrics) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const auto j = nlohmann::json::parse(stdout_only("generate --model " + path + " --prompt '' -n 8 --json"));
  EXPECT_EQ(j["tokens"], nlohmann::json({403, 407, 261, 378, 432, 383, 286, 261}));
  EXPECT_EQ(j["prompt_tokens"], 1);
  EXPECT_EQ(j["text"].get<std::string>().rfind("Once upon a time", 0), 0u);
  EXPECT_GT(j["metrics"]["decode_tokens_per_second"].get<double>(), 0.0);
  EXPECT_GT(j["metrics"]["time_to_first_token_seconds"].get<double>(), 0.0);
  EXPECT_TRUE(j["metrics"].contains("prefill_tokens_per_second"));
}

// -n beyond the room the context leaves (or -1) stops where the context ends, saying so: the JSON's
// finish_reason is "context" and the text goes to the last token that fits.
TEST(Cli, GenerateStopsAtTheContextAndSaysSo) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  for (const char* n : {"-1", "500"}) {
    SCOPED_TRACE(n);
    const auto j = nlohmann::json::parse(stdout_only("generate --model " + path + " --prompt '' --ctx 40 --json -n " + n));
    EXPECT_EQ(j["finish_reason"], "context");
    EXPECT_EQ(j["tokens"].size(), 40u);  // a 1-token prompt, and the last sampled token is never fed back
  }
  const auto fits = nlohmann::json::parse(stdout_only("generate --model " + path + " --prompt '' --ctx 40 --json -n 40"));
  EXPECT_EQ(fits["finish_reason"], "length");
  EXPECT_EQ(fits["tokens"].size(), 40u);
  const CliRun streamed = cli("generate --model " + path + " --prompt '' --ctx 40 -n 100");
  EXPECT_EQ(streamed.exit_code, 0) << streamed.out;
  EXPECT_NE(streamed.out.find("[stopped: the context length of 40 tokens is reached]"), std::string::npos) << streamed.out;
}

// generate --logprobs: the raw model's log-probabilities, bit-identical (as %.9g prints them) whether
// a long prompt goes in one step, in chunks or token by token.
TEST(Cli, GenerateLogprobsAreTheSameWhateverThePrefillChunking) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  std::string prompt;
  while (prompt.size() < 2400) prompt += "Once upon a time there was a little girl named Lily who loved to play. ";
  const std::string args = "generate --model " + path + " --prompt '" + prompt + "' -n 12 --json --logprobs 5";
  const auto whole = nlohmann::json::parse(stdout_only(args + " --max-batch-tokens 4096"));
  ASSERT_GT(whole["prompt_tokens"].get<int>(), 257);  // past the first 256-key attention chunk
  const nlohmann::json& content = whole["logprobs"]["content"];
  ASSERT_EQ(content.size(), whole["tokens"].size());
  for (const auto& entry : content) {
    ASSERT_EQ(entry["top_logprobs"].size(), 5u);
    // greedy: the chosen token is the most likely one; the alternatives come most likely first
    EXPECT_EQ(entry["id"], entry["top_logprobs"][0]["id"]);
    EXPECT_EQ(entry["logprob"], entry["top_logprobs"][0]["logprob"]);
    for (size_t i = 1; i < 5; ++i) EXPECT_LE(entry["top_logprobs"][i]["logprob"], entry["top_logprobs"][i - 1]["logprob"]);
    EXPECT_LE(entry["logprob"].get<double>(), 0.0);
  }
  for (const char* chunk : {"1", "7", "300"}) {
    const auto chunked = nlohmann::json::parse(stdout_only(args + " --max-batch-tokens " + chunk));
    EXPECT_EQ(chunked["logprobs"], whole["logprobs"]) << "--max-batch-tokens " << chunk;
  }
  // the logprobs are the model's, before the sampler's penalty: the first token's alternatives stay
  const auto penalised = nlohmann::json::parse(stdout_only(args + " --repeat-penalty 1.5"));
  EXPECT_EQ(penalised["logprobs"]["content"][0]["top_logprobs"], content[0]["top_logprobs"]);
}

TEST(Cli, GenerateStreamsPlainText) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const CliRun r = cli("generate --model " + path + " --prompt 'Once upon a time' -n 12");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("there was a little girl"), std::string::npos) << r.out;
}

TEST(Cli, SameSeedSameText) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const std::string args = "generate --model " + path + " --prompt 'Once' -n 24 --temp 0.9 --top-p 0.95 --json";
  const auto a = nlohmann::json::parse(stdout_only(args + " --seed 7"));
  const auto b = nlohmann::json::parse(stdout_only(args + " --seed 7"));
  const auto c = nlohmann::json::parse(stdout_only(args + " --seed 8"));
  EXPECT_EQ(a["tokens"], b["tokens"]);
  EXPECT_NE(a["tokens"], c["tokens"]);
}

TEST(Cli, TokenizeJson) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const auto j = nlohmann::json::parse(stdout_only("tokenize --model " + path + " --text 'Once upon a time' --json"));
  EXPECT_EQ(j["ids"], nlohmann::json({1, 403, 407, 261, 378}));
  ASSERT_EQ(j["pieces"].size(), 5u);
  const auto no_bos = nlohmann::json::parse(stdout_only("tokenize --model " + path + " --text 'Once' --no-bos --json"));
  EXPECT_NE(no_bos["ids"][0], 1);
}

TEST(Cli, TokenizeWorksOnAVocabularyOnlyFile) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const auto model = inferscope::GgufFile::open(path);
  inferscope::GgufWriter writer;
  for (const auto& [key, value] : model->metadata()) {
    if (key.rfind("tokenizer.", 0) == 0 || key == "general.architecture") writer.set(key, value);
  }
  const std::string vocab_only = ::testing::TempDir() + "/vocab-only.gguf";
  writer.write(vocab_only);
  const auto j = nlohmann::json::parse(stdout_only("tokenize --model " + vocab_only + " --text 'Once upon a time' --json"));
  EXPECT_EQ(j["ids"], nlohmann::json({1, 403, 407, 261, 378}));
  // The same file cannot run: generate names what is missing.
  const CliRun run = cli("generate --model " + vocab_only + " --prompt hi");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.out.find("llama.block_count"), std::string::npos) << run.out;
}

// A model is called by its file's name; general.name (often a training run's) is reported beside it.
TEST(Cli, InspectNamesTheModelByItsFile) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::demo_model_path());
  const auto j = nlohmann::json::parse(stdout_only("inspect --model " + path + " --json"));
  EXPECT_EQ(j["name"], "SmolLM2-135M-Instruct.Q4_1");
  EXPECT_EQ(j["name_in_file"], "Smollm2 135M 8k Lc100K Mix1 Ep2");
  const CliRun text = cli("inspect --model " + path);
  EXPECT_NE(text.out.find("name in the file: Smollm2 135M 8k Lc100K Mix1 Ep2"), std::string::npos) << text.out;
}

TEST(Cli, InspectReportsGeometryAndKvBytes) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const auto j = nlohmann::json::parse(stdout_only("inspect --model " + path + " --json --batch 3"));
  EXPECT_EQ(j["hyperparameters"]["n_kv_heads"], 4);
  EXPECT_EQ(j["hyperparameters"]["rope_freq_base"], 10000.0);
  EXPECT_EQ(j["tensors"].size(), 48u);
  // 2 x 2 bytes (f16) x 5 layers x 4 kv heads x head dim 8
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"], 640);
  EXPECT_EQ(j["kv_cache"]["bytes_full_context"], 640 * 2048 * 3);
  EXPECT_EQ(j["tokenizer"]["model"], "llama");
  EXPECT_EQ(j["tokenizer"]["add_bos"], true);
  const auto f32 = nlohmann::json::parse(stdout_only("inspect --model " + path + " --json --kv-dtype f32"));
  EXPECT_EQ(f32["kv_cache"]["bytes_per_token"], 1280);
}

// A Qwen3-shaped file (synthetic: heads of 32 over a 64-wide model, per-head Q/K norms): inspect
// says what differs from Llama, and generate runs it through the engine.
TEST(Cli, InspectAndGenerateAQwen3File) {
  inferscope::test::SyntheticModelSpec spec;
  spec.architecture = "qwen3";
  spec.key_length = 32;
  const std::string path = ::testing::TempDir() + "/qwen3-synthetic.gguf";
  inferscope::test::write_synthetic_model(spec, path);
  const auto j = nlohmann::json::parse(stdout_only("inspect --model " + path + " --json"));
  EXPECT_EQ(j["architecture"], "qwen3");
  EXPECT_EQ(j["hyperparameters"]["head_dim"], 32);
  EXPECT_EQ(j["differs_from_llama"],
            nlohmann::json({"RoPE rotates NEOX pairs (i, i + rope_dim/2), not adjacent ones",
                            "RMSNorm of every Q and K head before RoPE",
                            "head size from attention.key_length, not embedding / heads"}));
  // 2 x 2 bytes (f16) x 2 layers x 2 kv heads x 32
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"], 512);
  const CliRun text = cli("inspect --model " + path);
  EXPECT_NE(text.out.find("differs from Llama: RMSNorm of every Q and K head before RoPE"), std::string::npos) << text.out;
  const auto g = nlohmann::json::parse(stdout_only("generate --model " + path + " --prompt '' -n 6 --json"));
  // a random model may draw </s> before the sixth token
  if (g["finish_reason"] == "length") {
    EXPECT_EQ(g["tokens"].size(), 6u);
  } else {
    EXPECT_EQ(g["finish_reason"], "stop");
    EXPECT_LT(g["tokens"].size(), 6u);
  }
}

TEST(Cli, InspectDemoModel) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::demo_model_path());
  const auto j = nlohmann::json::parse(stdout_only("inspect --model " + path + " --json"));
  EXPECT_EQ(j["hyperparameters"]["n_layers"], 30);
  EXPECT_EQ(j["tokenizer"]["pre"], "smollm");
  EXPECT_EQ(j["chat_template"], "chatml");
  // 2 x 2 bytes x 30 layers x 3 kv heads x 64
  EXPECT_EQ(j["kv_cache"]["bytes_per_token"], 23040);
}

TEST(Cli, BenchJsonRows) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const auto j = nlohmann::json::parse(stdout_only("bench --model " + path + " -p 32 -n 8 -r 2 -o json --threads 1"));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["test"], "pp32");
  EXPECT_EQ(j[0]["n_prompt"], 32);
  EXPECT_EQ(j[1]["test"], "tg8");
  EXPECT_EQ(j[1]["n_gen"], 8);
  EXPECT_EQ(j[1]["n_threads"], 1);
  EXPECT_GT(j[0]["avg_ts"].get<double>(), 0.0);
  EXPECT_GE(j[0]["stddev_ts"].get<double>(), 0.0);
}

// bench --device-profile-out writes this machine as a roofline profile that serve-sim's dry run reads,
// each figure with its source (the figures themselves are measurements, not checked here); it needs a
// tg test to take the step overhead from.
TEST(Cli, BenchWritesAMeasuredDeviceProfile) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const std::string out = ::testing::TempDir() + "/measured.json";
  std::filesystem::remove(out);
  const CliRun bench = cli("bench --model " + path + " -p 0 -n 8 -r 1 --threads 1 --device-profile-out " + out);
  ASSERT_EQ(bench.exit_code, 0) << bench.out;
  std::ifstream in(out);
  const auto profile = nlohmann::json::parse(in);
  EXPECT_EQ(profile["kind"], "roofline");
  EXPECT_GT(profile["memory_bandwidth_gb_s"].get<double>(), 0);
  EXPECT_GT(profile["peak_tflops"].get<double>(), 0);
  EXPECT_GE(profile["step_overhead_us"].get<double>(), 0);
  EXPECT_EQ(profile["sources"].size(), 4u);
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  const CliRun dry = cli("serve-sim --model " + path + " --generate-workload 2 --prompt-len 8 --output-len 4 --dry-run "
                         "--device-profile " + out);
  EXPECT_EQ(dry.exit_code, 0) << dry.out;
  EXPECT_NE(dry.out.find("this machine, measured (1 threads)"), std::string::npos) << dry.out;
  const CliRun no_tg = cli("bench --model " + path + " -p 8 -n 0 -r 1 --device-profile-out " + out);
  EXPECT_EQ(no_tg.exit_code, 2);
  EXPECT_NE(no_tg.out.find("give -n > 0"), std::string::npos) << no_tg.out;
}

// A stand-in for llama-bench that appends its arguments to `calls` and answers 200 tokens/s for pp and
// 50 for tg, as llama-bench's -o json does; its path (`calls` + ".sh", so tests running at once keep
// apart).
std::string fake_llama_bench(const std::string& calls) {
  const std::string fake = calls + ".sh";
  std::remove(calls.c_str());
  {
    std::ofstream script(fake);
    script << "#!/bin/sh\necho \"$@\" >> '" << calls << "'\n"
           << "case \"$*\" in *'-n 0'*) ts=200 ;; *) ts=50 ;; esac\n"
           << "echo \"[{\\\"test_time\\\": \\\"x\\\", \\\"avg_ts\\\": $ts}]\"\n";
  }
  EXPECT_EQ(std::system(("chmod +x '" + fake + "'").c_str()), 0);
  return fake;
}

// --compare-llama-bench runs the given llama-bench once after each of our repetitions, on the same
// file and threads, and reports its figures with the ratio.
TEST(Cli, BenchComparesWithLlamaBenchAlternating) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const std::string calls = ::testing::TempDir() + "/llama-bench-alternating.calls";
  const std::string fake = fake_llama_bench(calls);
  const auto j = nlohmann::json::parse(
      stdout_only("bench --model " + path + " -p 32 -n 8 -r 3 -o json --threads 2 --compare-llama-bench " + fake));
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["llama_cpp_samples_ts"], nlohmann::json({200.0, 200.0, 200.0}));
  EXPECT_EQ(j[1]["llama_cpp_avg_ts"], 50.0);
  EXPECT_EQ(j[1]["llama_cpp_stddev_ts"], 0.0);
  EXPECT_DOUBLE_EQ(j[0]["ratio"].get<double>(), j[0]["avg_ts"].get<double>() / 200.0);
  EXPECT_DOUBLE_EQ(j[1]["ratio"].get<double>(), j[1]["avg_ts"].get<double>() / 50.0);
  // one call per repetition, pp first, each with the same file and threads
  std::ifstream in(calls);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const std::string pp = "-m " + path + " -p 32 -n 0 -r 1 -t 2 -o json", tg = "-m " + path + " -p 0 -n 8 -r 1 -t 2 -o json";
  EXPECT_EQ(lines, (std::vector<std::string>{pp, pp, pp, tg, tg, tg}));
  // the table says both and the ratio
  const std::string md = stdout_only("bench --model " + path + " -p 16 -n 0 -r 1 --threads 2 --compare-llama-bench " + fake);
  EXPECT_NE(md.find("| llama.cpp t/s | ours / llama.cpp |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 200.00 ± 0.00 |"), std::string::npos) << md;
}

// With --bandwidth, each tg repetition gets its window: the read bandwidth measured just before it, the
// roofline that implies, and both engines' figures against it.
TEST(Cli, BenchComparePlacesEachDecodeWindowOnItsRoofline) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const std::string fake = fake_llama_bench(::testing::TempDir() + "/llama-bench-windows.calls");
  const std::string args = "bench --model " + path + " -p 8 -n 8 -r 2 --threads 2 --bandwidth --compare-llama-bench " + fake;
  const auto j = nlohmann::json::parse(stdout_only(args + " -o json"));
  ASSERT_GE(j.size(), 2u);
  EXPECT_FALSE(j[0].contains("windows")) << "pp is compute-bound: no windows";
  const nlohmann::json& tg = j[1];
  ASSERT_EQ(tg["windows"].size(), 2u) << tg.dump();
  for (size_t i = 0; i < 2; ++i) {
    const nlohmann::json& w = tg["windows"][i];
    EXPECT_GT(w["read_bytes_per_second"].get<double>(), 1e8);
    EXPECT_DOUBLE_EQ(w["roofline_ts"].get<double>(),
                     w["read_bytes_per_second"].get<double>() / tg["weight_bytes"].get<double>());
    EXPECT_EQ(w["ts"], tg["samples_ts"][i]);
    EXPECT_EQ(w["llama_cpp_ts"], 50.0);
    EXPECT_DOUBLE_EQ(w["ratio"].get<double>(), tg["samples_ts"][i].get<double>() / 50.0);
  }
  const std::string md = stdout_only(args);
  EXPECT_NE(md.find("tg8 window by window"), std::string::npos) << md;
  EXPECT_NE(md.find("| window | read GB/s | roofline t/s | ours t/s | of roofline | llama.cpp t/s | of roofline |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("median ours / llama.cpp over the windows: "), std::string::npos) << md;
  // without llama-bench, --bandwidth measures once, as before
  EXPECT_EQ(stdout_only("bench --model " + path + " -p 0 -n 8 -r 2 --threads 2 --bandwidth").find("window by window"),
            std::string::npos);
}

// Each bad --compare-llama-bench: the exit code it gives and the words its message must hold.
TEST(Cli, BenchCompareRefusesWhatItCannotRun) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  struct Case {
    std::string args;
    int exit_code;  // -1: any failure
    std::string message;
  };
  const std::string pp = "bench --model " + path + " -p 16 -n 0 -r 1 --compare-llama-bench ";
  const Case cases[] = {
      {pp + "/nonexistent/llama-bench", 2, "/nonexistent/llama-bench is not an executable file"},
      {pp + "/bin/false", -1, "-o json failed (exit 1)"},
      {pp + "/bin/true", -1, "printed no single result with avg_ts"},
      {"bench --model " + path + " --attention-sweep --compare-llama-bench /bin/true", 2,
       "compares the pp and tg tests, not a sweep"},
  };
  for (const Case& c : cases) {
    const CliRun r = cli(c.args);
    if (c.exit_code >= 0) {
      EXPECT_EQ(r.exit_code, c.exit_code) << c.args;
    } else {
      EXPECT_NE(r.exit_code, 0) << c.args;
    }
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << ": " << r.out;
  }
}

// --flops adds the machine's roofs and places each test by its intensity: prefill shares every weight
// read among its tokens, decode does not, so only prefill can be compute-bound.
TEST(Cli, BenchFlopsPlacesTestsOnTheRoofline) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const auto j = nlohmann::json::parse(stdout_only("bench --model " + path + " -p 64 -n 16 -r 1 -o json --threads 1 --flops"));
  ASSERT_EQ(j.size(), 5u) << j.dump(2);  // pp, tg, their two roofline rows, mem_read
  const auto& pp = j[2];
  const auto& tg = j[3];
  EXPECT_EQ(pp["test"], "roofline_pp64");
  EXPECT_EQ(tg["test"], "roofline_tg16");
  EXPECT_GT(pp["intensity_flops_per_byte"].get<double>(), 10 * tg["intensity_flops_per_byte"].get<double>());
  for (const auto& r : {pp, tg}) {
    EXPECT_GT(r["achieved_flops_per_second"].get<double>(), 0);
    EXPECT_LE(r["attainable_flops_per_second"].get<double>(), r["peak_flops_per_second"].get<double>());
    EXPECT_NEAR(r["flops"].get<double>(), r["matmul_flops"].get<double>() + r["attention_flops"].get<double>(), 1.0);
  }
  // tg16 multiplies each of the 16 tokens through every matrix: 2 FLOPs per weight per token.
  EXPECT_GT(tg["matmul_flops"].get<double>(), 2.0 * 16 * 200000);
}

TEST(Cli, DevicesListsCpuFeatures) {
  const CliRun r = cli("devices");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("AVX2"), std::string::npos);
  EXPECT_NE(r.out.find("CUDA"), std::string::npos);
  EXPECT_NE(r.out.find("  packed weight rows: " + inferscope::describe_large_pages() + "\n"), std::string::npos) << r.out;
  // the kernels line agrees with the dispatcher: it names VNNI exactly when the int8 matmuls run that build
  const size_t at = r.out.find("  kernels in use: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  const std::string int8_kernel =
      inferscope::matmul_kernel_name(inferscope::DType::Q4_K, inferscope::ActivationPrecision::Q8);
  EXPECT_EQ(line.find("int8 kernels with VNNI") != std::string::npos, int8_kernel == "avx512vnni") << line;
  EXPECT_EQ(line.find("AVX-512VL") != std::string::npos, inferscope::use_avx512vl()) << line;
}

// `devices` says where the engine runs, that --device cuda chooses the GPU, and that the CUDA path
// has not been validated on a GPU here.
TEST(Cli, DevicesSaysWhereTheEngineRuns) {
  const CliRun r = cli("devices");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Engine: runs on the CPU by default; --device cuda[:N]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not yet validated on a GPU"), std::string::npos) << r.out;
}

TEST(Cli, DeviceOptionNamesABadValue) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const CliRun r = cli("generate --model " + path + " --prompt hi --device tpu -n 1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("--device: 'tpu' is not a device"), std::string::npos) << r.out;
}

// Without a model: each CPU kernel family this machine runs, timed on every quantized type, both
// activation precisions and 1 and 4 tokens; a family without its own kernel for a row is not timed
// twice (the AVX-512VL builds cover the packed-row kernels: every type exact, five with int8).
// --step-costs: a step at 1..16 new tokens, one sequence and that many, each against the one-token
// step and the roofline's prediction; both activation precisions once the weights are quantized.
TEST(Cli, BenchStepCostsPricesEveryStepShapeAgainstTheRoofline) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  constexpr int kContext = 32;
  const auto j = nlohmann::json::parse(stdout_only("bench --model " + path + " --step-costs --step-context " +
                                                   std::to_string(kContext) + " --quant q8 -r 1 -o json --threads 2"));
  ASSERT_EQ(j.size(), 2 * 7u) << j.dump();
  for (const nlohmann::json& r : j) {
    const int tokens = r["tokens"].get<int>();
    EXPECT_GT(r["one_sequence_seconds"].get<double>(), 0) << r.dump();
    EXPECT_GT(r["sequences_seconds"].get<double>(), 0) << r.dump();
    EXPECT_GT(r["roofline_one_sequence_seconds"].get<double>(), 0) << r.dump();
    // The roofline never predicts a step cheaper than one token. k sequences of one token cost at most
    // k one-token steps; one sequence's k tokens at most k steps whose every key count is the last
    // token's C + k, against the one-token step's C + 1 (where a step is compute-bound, that is felt).
    EXPECT_GE(r["roofline_sequences_x"].get<double>(), 1.0 - 1e-9) << r.dump();
    EXPECT_LE(r["roofline_sequences_x"].get<double>(), tokens + 1e-9) << r.dump();
    EXPECT_GE(r["roofline_one_sequence_x"].get<double>(), 1.0 - 1e-9) << r.dump();
    EXPECT_LE(r["roofline_one_sequence_x"].get<double>(), tokens * (kContext + tokens) / (kContext + 1.0) + 1e-9)
        << r.dump();
    if (tokens == 1) {
      EXPECT_EQ(r["one_sequence_x"].get<double>(), 1.0);
    }
    EXPECT_EQ(r.contains("target_x"), tokens <= 5) << r.dump();
  }
  EXPECT_EQ(j[0]["activations"], "f32");
  EXPECT_EQ(j[7]["activations"], "q8");
  EXPECT_EQ(j[13]["tokens"], 16);
  // The table says the same, and a context the model cannot hold is refused.
  const std::string md = stdout_only("bench --model " + path + " --step-costs --step-context 16 -r 1 --threads 2");
  EXPECT_NE(md.find("| one sequence ms | roofline ms | × 1-token | roofline × |"), std::string::npos) << md;
  const CliRun too_long = cli("bench --model " + path + " --step-costs --step-context 100000 -r 1");
  EXPECT_EQ(too_long.exit_code, 2);
  EXPECT_NE(too_long.out.find("do not fit the model's context length of 2048"), std::string::npos) << too_long.out;
}

TEST(Cli, BenchCpuKernelsTimesEveryFamilyTheCpuRuns) {
  const nlohmann::json j = inferscope::test::cli_json("bench --cpu-kernels -r 1 -o json");
  std::map<std::string, int> rows_by_kernel;
  for (const nlohmann::json& r : j["kernels"]) {
    ++rows_by_kernel[r["kernel"].get<std::string>()];
    EXPECT_GT(r["seconds"].get<double>(), 0) << r.dump();
    EXPECT_GT(r["macs_per_s"].get<double>(), 0) << r.dump();
  }
  const int rows = 8 * 2 * 2;  // types x precisions x token counts
  EXPECT_EQ(rows_by_kernel["scalar"], rows);
  EXPECT_EQ(rows_by_kernel["avx2"], inferscope::use_avx2() ? rows : 0);
  // the AVX-512 builds: exact on all 8 types, int8 on 5 where the CPU also has VNNI
  const bool vnni = inferscope::use_avx512vl() && inferscope::cpu_features().runs_avx512vnni_kernels();
  EXPECT_EQ(rows_by_kernel["avx512vl"], inferscope::use_avx512vl() ? 8 * 2 : 0);
  EXPECT_EQ(rows_by_kernel["avx512vnni"], vnni ? 5 * 2 : 0);
  const CliRun csv = cli("bench --cpu-kernels -r 1 -o csv");
  EXPECT_NE(csv.exit_code, 0);
  EXPECT_NE(csv.out.find("--cpu-kernels prints md or json, not csv"), std::string::npos) << csv.out;
}

// Without a model: the CUDA kernels against the device's copy bandwidth; where nothing CUDA can run,
// a clear error that says why (no CUDA in the build, or the runtime's reason).
TEST(Cli, BenchCudaKernelsRunsOrSaysWhyNot) {
  const std::string command = "bench --cuda-kernels -r 1 -o json";
#ifdef INFERSCOPE_HAVE_CUDA
  if (const std::string& reason = inferscope::gpu::device_unavailable_reason(); !reason.empty()) {
    const CliRun r = cli(command);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.out.find(reason), std::string::npos) << r.out;
    return;
  }
  const nlohmann::json j = inferscope::test::cli_json(command);
  EXPECT_GT(j["copy_bytes_per_s"].get<double>(), 0);
  std::map<std::string, int> gemv_by_kernel, decode_by_kernel;
  for (const nlohmann::json& r : j["gemv"]) {
    ++gemv_by_kernel[r["kernel"].get<std::string>()];
    EXPECT_GT(r["of_copy"].get<double>(), 0) << r.dump();
  }
  for (const nlohmann::json& r : j["decode_attention"]) ++decode_by_kernel[r["kernel"].get<std::string>()];
  // two matrices x 1 and 8 tokens x five weight types (three for int8 activations)
  EXPECT_EQ(gemv_by_kernel["warp-rows"], 20);
  EXPECT_EQ(gemv_by_kernel["split-k"], 20);
  EXPECT_EQ(gemv_by_kernel["dp4a (q8 activations)"], 12);
  EXPECT_EQ(decode_by_kernel["tiles"], 3);  // contexts 1k, 4k, 16k
  EXPECT_EQ(decode_by_kernel["wide"], 3);
#else
  const CliRun r = cli(command);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("this build has no CUDA support"), std::string::npos) << r.out;
#endif
}

TEST(Cli, ChatKeepsHistoryAndResets) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const CliRun r = cli("chat --model " + path + " -n 4 <<'EOF'\nhello\nagain\n/reset\n/quit\nEOF");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("[conversation reset]"), std::string::npos) << r.out;
  // /quit while turns are queued behind a streaming reply leaves at once, starting none of them.
  const CliRun quit = cli("chat --model " + path + " -n 200 <<'EOF'\nhello\nagain\nand again\n/quit\nEOF");
  EXPECT_EQ(quit.exit_code, 0) << quit.out;
}

TEST(Cli, ChatFollowsItsContextPolicyWhenTheContextFills) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  // The turns come from a file: a here-document would end the command line before stderr joins stdout.
  const std::string input = ::testing::TempDir() + "/chat-turns.txt";
  std::ofstream(input) << "Once upon a time there was a dog\nand then the dog ran far away\n"
                          "and the cat came home again\nthe end of the story\n";
  const std::string turns = " < " + input;
  // A 160-token context and 8-token replies: the third turn no longer fits whole.
  const CliRun dropped = cli("chat --model " + path + " --ctx 160 -n 8 --temp 0" + turns);
  EXPECT_EQ(dropped.exit_code, 0) << dropped.out;
  EXPECT_NE(dropped.out.find("to fit the 160-token context with room for the reply (keep the system prompt and the "
                             "first exchange, drop the middle).]"),
            std::string::npos)
      << dropped.out;
  EXPECT_EQ(dropped.out.find("leaves no room"), std::string::npos) << dropped.out;
  const CliRun stopped = cli("chat --model " + path + " --ctx 160 -n 8 --temp 0 --context-policy stop" + turns);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.out;
  EXPECT_NE(stopped.out.find("leaves no room for a reply in the 160-token context. Start a new session"), std::string::npos)
      << stopped.out;
  const CliRun bad = cli("chat --model " + path + " --context-policy rolling < /dev/null");
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--context-policy must be stop, drop-oldest or drop-middle, not 'rolling'"), std::string::npos)
      << bad.out;
}

TEST(Cli, KvDtypeQ8RunsOnTheDemoModel) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::demo_model_path());
  // a continuation whose answer is far from a tie (the chat question's first token is a near tie that
  // q8's rounding can flip)
  const CliRun r =
      cli("generate --model " + path + " --prompt 'The capital of France is the city of' -n 8 --kv-dtype q8 --json", true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["tokens"].size(), 8u);
  EXPECT_NE(j["text"].get<std::string>().find("Paris"), std::string::npos) << j["text"];
  // 2 x 68 bytes (two Q8_0 blocks of 64) x 30 layers x 3 kv heads
  const auto q8 = nlohmann::json::parse(stdout_only("inspect --model " + path + " --json --kv-dtype q8"));
  EXPECT_EQ(q8["kv_cache"]["bytes_per_token"], 12240);
}

TEST(Cli, KvDtypeQ8AtHeadDim8ExitsTwoNamingIt) {
  INFERSCOPE_REQUIRE_FILE(path, inferscope::test::shared_model_path("stories260K.gguf"));
  const CliRun r = cli("generate --model " + path + " --prompt Once -n 4 --kv-dtype q8");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--kv-dtype q8 needs a head dimension that is a multiple of 32 (this model: 8)"),
            std::string::npos)
      << r.out;
  const CliRun bad = cli("generate --model " + path + " --prompt Once --kv-dtype q4");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--kv-dtype: 'q4' is not one of f32, f16, q8"), std::string::npos) << bad.out;
}

TEST(Cli, VersionIsTheProjectVersion) {
  const CliRun version = cli("--version");
  EXPECT_EQ(version.exit_code, 0);
  // The project version, then the git revision when the build was configured in a checkout.
  EXPECT_EQ(version.out.rfind(std::string("inferscope-cli ") + INFERSCOPE_VERSION, 0), 0u) << version.out;
  EXPECT_NE(cli("--help").out.find("--version"), std::string::npos);
}

TEST(Cli, BadInputExitsTwoWithAClearMessage) {
  const CliRun missing = cli("generate --model /nonexistent.gguf --prompt hi");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.out.find("/nonexistent.gguf"), std::string::npos) << missing.out;

  const CliRun unknown = cli("generate --bogus 1");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.out.find("--bogus"), std::string::npos);

  const CliRun logprobs_without_json = cli("generate --model x.gguf --prompt hi --logprobs 3");
  EXPECT_EQ(logprobs_without_json.exit_code, 2);
  EXPECT_NE(logprobs_without_json.out.find("--logprobs needs --json"), std::string::npos) << logprobs_without_json.out;
  const CliRun too_many_logprobs = cli("generate --model x.gguf --prompt hi --json --logprobs 21");
  EXPECT_EQ(too_many_logprobs.exit_code, 2);
  EXPECT_NE(too_many_logprobs.out.find("--logprobs"), std::string::npos) << too_many_logprobs.out;

  const CliRun bad_number = cli("generate --model x.gguf --prompt hi --top-k many");
  EXPECT_EQ(bad_number.exit_code, 2);
  EXPECT_NE(bad_number.out.find("--top-k"), std::string::npos);

  const std::string junk = ::testing::TempDir() + "/junk.gguf";
  std::ofstream(junk) << "this is not a model file";
  const CliRun bad_file = cli("inspect --model " + junk);
  EXPECT_EQ(bad_file.exit_code, 2);
  EXPECT_NE(bad_file.out.find("junk.gguf"), std::string::npos) << bad_file.out;
  EXPECT_EQ(bad_file.out.find("terminate"), std::string::npos) << bad_file.out;

  EXPECT_EQ(cli("frobnicate").exit_code, 2);
}

}  // namespace
