// inferscope-cli bench: llama-bench-style prompt processing (ppN) and text generation (tgN) speed.
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <unistd.h>

#include "core/cli/bench_backend.h"
#include "core/cli/bench_cpu_kernels.h"
#include "core/cli/bench_cuda_kernels.h"
#include "core/cli/bench_roofline.h"
#include "core/cli/bench_step_costs.h"
#include "core/cli/bench_tokens.h"
#include "core/cli/bench_windows.h"
#include "core/common/text_format.h"
#include "core/cli/measured_profile.h"
#include "core/common/atomic_file.h"
#include "core/cli/llama_bench_runner.h"
#include "core/cli/commands.h"
#include "core/kv/kv_dtype.h"
#include "core/cli/model_options.h"
#include "core/cli/sampling_options.h"
#include "core/cli/spec_sweep.h"
#include "core/engine/prompt.h"
#include "core/attention/attention_bench.h"
#include "core/engine/setting_table.h"
#include "core/engine/sync_engine.h"
#include "core/gguf/gguf_file.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/memory_bandwidth.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope::cli {
namespace {

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

struct BenchRow {
  std::string test;  // "pp512", "tg128"
  int64_t n_prompt = 0, n_gen = 0;
  std::vector<double> samples_ts;        // tokens per second of each repetition
  std::vector<double> llama_samples_ts;  // llama-bench's, run after each of ours (--compare-llama-bench)
  std::vector<double> window_read_bps;   // read bandwidth just before each of ours (tg, compare with --bandwidth)
  double mean() const { return inferscope::cli::mean(samples_ts); }
  double stddev() const { return inferscope::cli::stddev(samples_ts); }
  double ratio() const { return mean() / inferscope::cli::mean(llama_samples_ts); }  // ours / llama.cpp's
};

// A tg row's repetitions with their windows' bandwidth (--compare-llama-bench with --bandwidth).
std::vector<DecodeWindow> decode_windows(const BenchRow& row) {
  std::vector<DecodeWindow> windows;
  for (size_t i = 0; i < row.window_read_bps.size(); ++i)
    windows.push_back({row.window_read_bps[i], row.samples_ts[i], row.llama_samples_ts[i]});
  return windows;
}

// A request of `prompt` that runs to n_gen output tokens whatever it samples (greedy, EOS ignored).
EngineRequest bench_request(std::vector<TokenId> prompt, int64_t n_gen) {
  EngineRequest r;
  r.prompt_tokens = std::move(prompt);
  r.max_tokens = static_cast<int32_t>(n_gen);
  r.sampling.ignore_eos = true;
  return r;
}

// llama-bench's ppN: one prefill of n tokens into an empty cache (and the first token sampled):
// prompt tokens over the time to first token.
double run_pp(SyncEngine& engine, const std::vector<TokenId>& tokens) {
  const RequestOutcome r = engine.run(bench_request(tokens, 1));
  if (r.reason == StopReason::Failed) throw std::runtime_error("bench: " + r.error);
  return static_cast<double>(tokens.size()) / r.metrics.time_to_first_token_seconds;
}

// llama-bench's tgN: n single-token steps from an empty cache (a one-token prompt, then n - 1
// decodes of what was sampled): n over the request's whole latency.
double run_tg(SyncEngine& engine, TokenId first, int64_t n) {
  const RequestOutcome r = engine.run(bench_request({first}, n));
  if (r.reason == StopReason::Failed) throw std::runtime_error("bench: " + r.error);
  return static_cast<double>(n) / r.metrics.e2e_request_latency_seconds;
}


// One attention call per context and phase, naive vs flash, with the model's attention shape.
int attention_sweep(const LlamaModel& model, const EngineConfig& config, int32_t reps, const std::string& output) {
  AttentionBenchOptions o = attention_bench_options(model, config);
  o.repeats = reps;
  ThreadPool pool(config.threads);
  const std::vector<AttentionBenchRow> rows = run_attention_sweep(o, pool);
  if (output == "json") {
    nlohmann::json arr = nlohmann::json::array();
    for (const AttentionBenchRow& r : rows) {
      arr.push_back({{"implementation", r.implementation}, {"phase", r.phase}, {"context", r.context},
                     {"seconds_mean", r.seconds_mean}, {"seconds_sd", r.seconds_sd},
                     {"attention_scratch_bytes", r.scratch_bytes}, {"max_abs_diff", r.max_abs_diff},
                     {"n_threads", pool.size()}});
    }
    std::cout << arr.dump(2) << "\n";
    return 0;
  }
  const bool csv = output == "csv";
  std::cout << (csv ? "implementation,phase,context,ms_mean,ms_sd,scratch_bytes,max_abs_diff\n"
                    : "| attention | phase | context | ms per call | scratch | max abs diff |\n"
                      "| --- | --- | ---: | ---: | ---: | ---: |\n");
  for (const AttentionBenchRow& r : rows) {
    if (csv) {
      std::cout << r.implementation << "," << r.phase << "," << r.context << "," << format_fixed(r.seconds_mean * 1e3, 4) << ","
                << format_fixed(r.seconds_sd * 1e3, 4) << "," << r.scratch_bytes << "," << r.max_abs_diff << "\n";
    } else {
      std::cout << "| " << r.implementation << " | " << r.phase << " | " << r.context << " | "
                << format_fixed(r.seconds_mean * 1e3, 3) << " ± " << format_fixed(r.seconds_sd * 1e3, 3) << " | "
                << format_fixed(static_cast<double>(r.scratch_bytes) / 1024.0, 1) << " KiB | " << r.max_abs_diff << " |\n";
    }
  }
  return 0;
}

// bench --cpu-kernels: md or json (csv is not offered: the table's columns are the kernels found).
int cpu_kernels(int32_t reps, const std::string& output) {
  if (output == "csv") throw UsageError("--cpu-kernels prints md or json, not csv");
  const CpuKernelBench bench = run_cpu_kernel_bench(reps);
  std::cout << (output == "json" ? cpu_kernel_bench_json(bench).dump(2) + "\n" : cpu_kernel_bench_markdown(bench));
  return 0;
}

// bench --cuda-kernels: md or json (csv is not offered: the tables differ in their columns).
int cuda_kernels(int32_t reps, const std::string& output) {
#ifdef INFERSCOPE_HAVE_CUDA
  if (output == "csv") throw UsageError("--cuda-kernels prints md or json, not csv");
  const CudaKernelBench bench = run_cuda_kernel_bench(reps);
  std::cout << (output == "json" ? cuda_kernel_bench_json(bench).dump(2) + "\n" : cuda_kernel_bench_markdown(bench));
  return 0;
#else
  (void)reps;
  (void)output;
  throw std::runtime_error("bench --cuda-kernels: this build has no CUDA support (INFERSCOPE_CUDA=OFF, or no CUDA toolkit at build time)");
#endif
}

// The spec sweep's prompt: --sweep-prompt as plain text, else --sweep-chat as a user message.
std::vector<TokenId> sweep_prompt(const LlamaModel& model, const Args& args) {
  if (args.has("--sweep-prompt")) return encode_prompt(model, args.str("--sweep-prompt", ""));
  std::vector<ChatMessage> messages(1);
  messages[0].role = "user";
  messages[0].content = args.str("--sweep-chat", "Write a short story about a lighthouse keeper.");
  return encode_chat(model, messages);
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  std::vector<OptionSpec> specs = with_model_options({
      {"--n-prompt", "-p", true, "prompt tokens of the pp test (default 512; 0 skips it)"},
      {"--n-gen", "-n", true, "generated tokens of the tg test (default 128; 0 skips it)"},
      {"--repetitions", "-r", true, "repetitions of each test (default 5)"},
      {"--output", "-o", true, "md (default) | csv | json"},
      {"--bandwidth", "", false,
       "also measure memory read bandwidth and the decode roofline it implies (with --compare-llama-bench: also "
       "before each tg repetition, placing each pair against its own window's roofline)"},
      {"--flops", "", false,
       "also measure the machine's peak FLOP/s and read bandwidth (the roofline's roofs) and place each test on it"},
      {"--device-profile-out", "", true,
       "also measure both roofs (as --flops) and write this machine as a roofline device profile to PATH, its step "
       "overhead from the tg test (for serve-sim --dry-run --device-profile PATH)"},
      {"--attention-sweep", "", false, "instead: time one attention call, naive vs flash, for context 128..8192"},
      {"--spec-sweep", "", false,
       "instead: with --spec, for k = 1..8 and auto (only --spec-k's, when given): a speculative step's cost against "
       "a decode step, acceptance and speed-up on --sweep-chat (or --sweep-prompt) over -n tokens, the runs taking "
       "turns"},
      {"--sweep-chat", "", true, "spec sweep: the user message (default: a prose request)"},
      {"--sweep-prompt", "", true, "spec sweep: plain prompt text instead of a chat message"},
      {"--step-costs", "", false,
       "instead: one forward step's time at 1, 2, 3, 4, 6, 8 and 16 new tokens after a --step-context cache, as one "
       "sequence (a verify, a prefill chunk) and as that many sequences (a decode batch), each as a multiple of the "
       "one-token step beside the roofline's prediction, for f32 and q8 activations"},
      {"--step-context", "", true, "step costs: tokens each sequence holds before the step (default 128)"},
      {"--cpu-kernels", "", false,
       "instead, without a model: one L2-resident matmul per quantized weight type, activation precision and "
       "token count (1, 4) through each CPU kernel family this machine runs (scalar, AVX2, AVX-512VL), on one "
       "thread (md or json)"},
      {"--cuda-kernels", "", false,
       "instead, without a model: the CUDA kernels' bandwidth on device 0 against a device-to-device copy (GEMV "
       "per weight type, warp-rows and split-k, and dp4a with int8 activations for Q8_0/Q4_0/Q4_1, on a square "
       "matrix and one of few rows; paged decode attention at "
       "1k/4k/16k), the cuBLAS prefill GEMM's TFLOP/s per weight type and flash vs naive prefill attention (md or "
       "json)"},
      {"--compare-llama-bench", "", true,
       "PATH of llama.cpp's llama-bench: run it on the same file and threads after each of our repetitions "
       "(alternating, one repetition per call) and print both with the ratio"},
  });
  for (OptionSpec& s : sampling_option_specs()) specs.push_back(std::move(s));
  if (print_help_if_asked("bench --model PATH [-p 512] [-n 128] [-r 5] [--threads N] [-o md|csv|json]", specs, argc,
                          argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  const int64_t n_prompt = args.integer("--n-prompt", 512, 0, 1 << 20);
  const int64_t n_gen = args.integer("--n-gen", 128, 0, 1 << 20);
  const int64_t reps = args.integer("--repetitions", 5, 1, 1000);
  const std::string output = args.choice("--output", "md", {"md", "csv", "json"});
  const std::string llama_bench = args.str("--compare-llama-bench", "");
  if (!llama_bench.empty() && (args.has("--attention-sweep") || args.has("--spec-sweep"))) {
    throw UsageError("--compare-llama-bench compares the pp and tg tests, not a sweep");
  }
  if (!llama_bench.empty() && ::access(llama_bench.c_str(), X_OK) != 0) {
    throw UsageError("--compare-llama-bench: " + llama_bench + " is not an executable file");
  }
  if (args.has("--cpu-kernels")) return cpu_kernels(static_cast<int32_t>(reps), output);
  if (args.has("--cuda-kernels")) return cuda_kernels(static_cast<int32_t>(reps), output);
  EngineConfig config = engine_config(args);
  auto model = load_model(args);
  if (args.has("--attention-sweep")) return attention_sweep(*model, config, static_cast<int32_t>(reps), output);
  if (args.has("--step-costs")) {
    const auto context = static_cast<int32_t>(args.integer("--step-context", 128, 1, 1 << 20));
    print_step_costs(measure_step_costs(*model, config, context, reps), output);
    return 0;
  }
  if (args.has("--spec-sweep")) {
    return spec_sweep(*model, config, sweep_prompt(*model, args), n_gen, sampling_params(args), reps,
                      args.has("--spec-k"), output);
  }
  // A ppN request holds N tokens and samples one more; a tgN request holds N.
  const int64_t needed = std::max<int64_t>(1, std::max(n_prompt + 1, n_gen));
  if (needed > model->config().context_length) {
    throw UsageError("the test lengths exceed the model's context length of " +
                     std::to_string(model->config().context_length));
  }
  config.context_length = static_cast<int32_t>(needed);
  config.kv.prefix_cache = false;  // every repetition must compute its prompt, as llama-bench does
  EngineCoreOptions core_options;
  core_options.conversion_progress = conversion_progress_printer(config.quant);
  SyncEngine engine(*model, config, core_options);
  const int32_t n_threads = ThreadPool::resolved_size(config.threads);

  // llama-bench's repetition of a row's test, right after one of ours
  const auto llama_bench_after = [&](BenchRow& row) {
    if (llama_bench.empty()) return;
    row.llama_samples_ts.push_back(
        run_llama_bench({llama_bench, model->file().path(), row.n_prompt, row.n_gen, n_threads}));
  };
  std::vector<BenchRow> rows;
  if (n_prompt > 0) {
    BenchRow row{"pp" + std::to_string(n_prompt), n_prompt, 0, {}, {}, {}};
    const auto tokens = random_tokens(*model, n_prompt, 1);
    run_pp(engine, tokens);  // warm-up
    for (int64_t i = 0; i < reps; ++i) {
      row.samples_ts.push_back(run_pp(engine, tokens));
      llama_bench_after(row);
    }
    rows.push_back(row);
  }
  if (n_gen > 0) {
    BenchRow row{"tg" + std::to_string(n_gen), 0, n_gen, {}, {}, {}};
    const TokenId first = random_tokens(*model, 1, 2)[0];
    run_tg(engine, first, std::min<int64_t>(n_gen, 16));  // warm-up
    const bool windows = !llama_bench.empty() && args.has("--bandwidth");
    std::optional<ThreadPool> probe_pool;
    if (windows) probe_pool.emplace(config.threads);
    for (int64_t i = 0; i < reps; ++i) {
      // a short probe (256 MiB, best of 3): this window's roofline, not the machine's best
      if (windows) row.window_read_bps.push_back(measure_read_bandwidth(*probe_pool, size_t{256} << 20, 3).read_bytes_per_second);
      row.samples_ts.push_back(run_tg(engine, first, n_gen));
      llama_bench_after(row);
    }
    rows.push_back(row);
  }
  // Decode reads every weight once per token: bandwidth / weight bytes bounds tg from above.
  BandwidthResult bw;
  PeakFlopsResult peak;
  const std::string profile_out = args.str("--device-profile-out", "");
  if (!profile_out.empty() && n_gen == 0) throw UsageError("--device-profile-out takes its step overhead from the tg test: give -n > 0");
  if (args.has("--bandwidth") || args.has("--flops") || !profile_out.empty()) {
    ThreadPool pool(config.threads);
    bw = measure_read_bandwidth(pool, size_t{1} << 30, 5);
    if (args.has("--flops") || !profile_out.empty()) peak = measure_peak_flops(pool, 1.0);
  }
  std::vector<RooflineRow> roofline;
  if (peak.threads > 0) {
    std::vector<RooflineTest> tests;
    for (const BenchRow& r : rows) tests.push_back({r.test, r.n_prompt, r.n_gen, r.mean()});
    roofline = roofline_rows(tests, engine.core().step_cost_model(), config.scheduler.max_batch_tokens, peak, bw);
  }
  if (!profile_out.empty()) {
    // the tg row comes last (n_gen > 0)
    write_file_atomically(profile_out, measured_device_profile(roofline.back(), n_gen, peak, bw, n_threads).dump(2) + "\n");
    std::cerr << "wrote the device profile " << profile_out << "\n";
  }
  // The weights at the --quant level, which is what each decode step streams.
  const size_t weight_bytes = engine.core().weights().weight_bytes();
  const double roofline_tg = bw.read_bytes_per_second / static_cast<double>(weight_bytes);

  const std::string model_name = model->config().name;
  const double size_gib = static_cast<double>(weight_bytes) / (1024.0 * 1024.0 * 1024.0);
  const double params_m = static_cast<double>(model->parameter_count()) / 1e6;
  const std::string activations = find_setting("activations")->get(config);
  const std::string quant = find_setting("quant")->get(config);
  const std::string backend = bench_backend(engine.core().metrics().snapshot(0).device, config);
  if (output == "json") {
    nlohmann::json arr = nlohmann::json::array();
    for (const BenchRow& r : rows) {
      nlohmann::json row = {{"model_filename", model->file().path()}, {"model_type", model_name},
                            {"model_size", weight_bytes}, {"model_n_params", model->parameter_count()},
                            {"backends", backend}, {"n_threads", n_threads}, {"kv_dtype", kv_dtype_name(config.kv_dtype)}, {"activations", activations},
                            {"quant", quant}, {"weight_bytes", weight_bytes},
                            {"test", r.test}, {"n_prompt", r.n_prompt}, {"n_gen", r.n_gen}, {"avg_ts", r.mean()},
                            {"stddev_ts", r.stddev()}, {"samples_ts", r.samples_ts}};
      if (!r.llama_samples_ts.empty()) {
        row["llama_cpp_avg_ts"] = mean(r.llama_samples_ts);
        row["llama_cpp_stddev_ts"] = stddev(r.llama_samples_ts);
        row["llama_cpp_samples_ts"] = r.llama_samples_ts;
        row["ratio"] = r.ratio();
      }
      if (!r.window_read_bps.empty()) row["windows"] = decode_windows_json(decode_windows(r), static_cast<double>(weight_bytes));
      arr.push_back(row);
    }
    for (const RooflineRow& r : roofline) arr.push_back(roofline_json(r, peak, bw));
    if (bw.repetitions > 0) {
      arr.push_back({{"test", "mem_read"}, {"n_threads", n_threads}, {"buffer_bytes", bw.buffer_bytes},
                     {"read_bytes_per_second", bw.read_bytes_per_second}, {"weight_bytes", weight_bytes},
                     {"roofline_tg_ts", roofline_tg}});
    }
    std::cout << arr.dump(2) << "\n";
  } else if (output == "csv") {
    std::cout << "model,size_gib,params_m,backend,threads,test,n_prompt,n_gen,avg_ts,stddev_ts"
              << (llama_bench.empty() ? "" : ",llama_cpp_avg_ts,llama_cpp_stddev_ts,ratio") << "\n";
    for (const BenchRow& r : rows) {
      std::cout << '"' << model_name << "\"," << format_fixed(size_gib, 4) << "," << format_fixed(params_m, 2) << "," << backend << ","
                << n_threads << "," << r.test << "," << r.n_prompt << "," << r.n_gen << "," << format_fixed(r.mean(), 2)
                << "," << format_fixed(r.stddev(), 2);
      if (!llama_bench.empty()) {
        std::cout << "," << format_fixed(mean(r.llama_samples_ts), 2) << "," << format_fixed(stddev(r.llama_samples_ts), 2) << ","
                  << format_fixed(r.ratio(), 3);
      }
      std::cout << "\n";
    }
  } else {
    std::cout << "| model | size | params | backend | threads | test | t/s |"
              << (llama_bench.empty() ? "" : " llama.cpp t/s | ours / llama.cpp |") << "\n"
              << "| --- | ---: | ---: | --- | ---: | ---: | ---: |" << (llama_bench.empty() ? "" : " ---: | ---: |")
              << "\n";
    for (const BenchRow& r : rows) {
      std::cout << "| " << model_name << " | " << format_fixed(size_gib * 1024, 2) << " MiB | " << format_fixed(params_m, 2) << " M | "
                << backend << " | " << n_threads << " | " << r.test << " | " << format_fixed(r.mean(), 2) << " ± "
                << format_fixed(r.stddev(), 2) << " |";
      if (!llama_bench.empty()) {
        std::cout << " " << format_fixed(mean(r.llama_samples_ts), 2) << " ± " << format_fixed(stddev(r.llama_samples_ts), 2) << " | "
                  << format_fixed(r.ratio(), 3) << "x |";
      }
      std::cout << "\n";
    }
    if (bw.repetitions > 0) {
      std::cout << "\nmemory read bandwidth: " << format_fixed(bw.read_bytes_per_second / 1e9, 2) << " GB/s (" << n_threads
                << " threads); weights " << format_fixed(static_cast<double>(weight_bytes) / 1e6, 1)
                << " MB per token -> decode roofline " << format_fixed(roofline_tg, 1) << " t/s\n";
    }
    for (const BenchRow& r : rows)
      if (!r.window_read_bps.empty()) print_decode_windows(std::cout, r.test, decode_windows(r), static_cast<double>(weight_bytes));
    if (!roofline.empty()) print_roofline(roofline, peak, bw);
  }
  return 0;
}

}  // namespace inferscope::cli
