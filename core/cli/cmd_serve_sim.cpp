// inferscope-cli serve-sim: replay a serving workload through the engine (its scheduler, KV cache
// manager and model, or the dry run's cost model), and report memory use, concurrency,
// preemptions, prefix-cache hits, throughput and TTFT.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <climits>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/cli/commands.h"
#include "core/engine/config_overrides.h"
#include "core/cli/device_fit.h"
#include "core/cli/shape_options.h"
#include "core/servesim/device_profile.h"
#include "core/cli/model_options.h"
#include "core/cli/endpoint_options.h"
#include "core/cli/remote_serve_sim.h"
#include "core/cli/serve_sim_report.h"
#include "core/common/text_format.h"
#include "core/remote/workload_target.h"
#include "core/model/llama_model.h"
#include "core/workload/workload.h"

namespace inferscope::cli {
namespace {

// The share of a device's memory that weights and KV cache take by default (vLLM's --gpu-memory-utilization).
constexpr double kGpuMemoryUtilization = 0.9;

// "A:B" (or "A" for A:A) as a length range.
LengthRange length_range(const Args& args, const std::string& name) {
  const std::string v = args.required(name);
  const size_t colon = v.find(':');
  LengthRange r;
  try {
    size_t used = 0;
    r.min = std::stoi(v.substr(0, colon), &used);
    if (used != (colon == std::string::npos ? v.size() : colon)) throw std::invalid_argument(v);
    r.max = colon == std::string::npos ? r.min : std::stoi(v.substr(colon + 1), &used);
    if (colon != std::string::npos && used != v.size() - colon - 1) throw std::invalid_argument(v);
  } catch (const std::logic_error&) {
    throw UsageError(name + ": '" + v + "' is not a range A:B of token counts");
  }
  if (r.min < 1 || r.max < r.min) throw UsageError(name + ": '" + v + "' needs 1 <= A <= B");
  return r;
}

Workload workload_from(const Args& args) {
  if (args.has("--workload") == args.has("--generate-workload")) {
    throw UsageError("give exactly one of --workload FILE and --generate-workload N");
  }
  if (args.has("--workload")) return load_workload(args.str("--workload", ""));
  return generate_workload(static_cast<int32_t>(args.integer("--generate-workload", 0, 1, 1 << 20)),
                           length_range(args, "--prompt-len"), length_range(args, "--output-len"),
                           static_cast<uint64_t>(args.integer("--seed", 1, 0, INT64_MAX)));
}

// The text summary's first lines: the cache, its budget and what priced the steps.
std::vector<std::string> local_header(const ServeSummary& s, const nlohmann::json& config, const DeviceFit& fit) {
  std::string line = "serve-sim: " + std::to_string(s.requests_total) + " requests, " + config["kv"].get<std::string>() + " KV";
  if (config["kv"] == "paged") {
    line += " (block " + config["block_size"].dump() + ", prefix cache " + (config["prefix_cache"] ? "on" : "off") + ")";
  } else {
    line += " (max_seq_len " + config["max_seq_len"].dump() + " per request)";
  }
  line += ", budget " + format_number(config["kv_budget_bytes"].get<double>() / (1 << 20), "%.2f") + " MiB" +
          (fit.devices > 1 ? " over " + std::to_string(fit.devices) + " devices, " : ", ") +
          (config["dry_run"] ? "dry run on a virtual clock, steps priced on " + config["device"].get<std::string>()
                             : "real model on the wall clock");
  std::vector<std::string> lines = {line};
  if (config["dry_run"] && config["model_shape"].is_string()) {
    lines.push_back("  model shape     " + config["model_shape"].get<std::string>() + ", weights " +
                    config["weights_type"].get<std::string>() + " (no model file)");
  }
  if (config["dry_run"] && config["device_bandwidth_bytes_per_s"].is_number()) lines.push_back("  per device      " + fit.text());
  return lines;
}

// The workload through the engine core on --model's file or --model-shape: the real model on the
// wall clock, or (--dry-run) the scheduler and KV manager with each step priced on a virtual clock.
ServeSimRun serve_sim_locally(const Args& args, const Workload& workload) {
  const DryRunCost default_cost = default_dry_run_cost();
  const bool dry_run = args.has("--dry-run");
  const bool linear_flags = args.has("--step-fixed-ms") || args.has("--step-per-token-ms");
  if (!dry_run && (linear_flags || args.has("--device-profile"))) {
    throw UsageError("--step-fixed-ms, --step-per-token-ms and --device-profile model a step of the --dry-run only");
  }
  if (linear_flags && args.has("--device-profile")) {
    throw UsageError("--device-profile prices steps itself; drop --step-fixed-ms and --step-per-token-ms");
  }
  DeviceProfile device;
  device.name = "the linear CPU model";
  device.linear = DryRunCost{args.real("--step-fixed-ms", default_cost.fixed_s * 1e3, 0, 1e6) / 1e3,
                             args.real("--step-per-token-ms", default_cost.per_token_s * 1e3, 0, 1e6) / 1e3};
  if (args.has("--device-profile")) {
    try {
      device = read_device_profile(device_profile_path(args.str("--device-profile", "")));
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string("--device-profile: ") + e.what());
    }
  }
  DryRunPricing pricing = device.roofline ? DryRunPricing(*device.roofline) : DryRunPricing(*device.linear);
  EngineConfig config = engine_config(args);  // a default budget of one request at max_seq_len (a device's below)
  auto model = load_model_or_shape(args);
  pricing.tensor_parallel = tensor_parallel(args, device, model->config());
  // --kv-budget-mib is one device's: the cache holds every device's share of each token
  config.kv.budget_bytes *= static_cast<size_t>(pricing.tensor_parallel.devices);

  const int32_t context = resolve_config(config, *model).context_length;  // --ctx, at most the model's
  config.kv.max_seq_len = static_cast<int32_t>(args.integer("--max-seq-len", context, 1, context));
  DeviceFit fit;
  fit.devices = pricing.tensor_parallel.devices;
  fit.weight_bytes = weight_bytes_at(*model, config.quant);
  if (args.has("--gpu-memory-utilization") && args.has("--kv-budget-mib")) {
    throw UsageError("--gpu-memory-utilization and --kv-budget-mib both size the KV cache: give one");
  }
  if (args.has("--gpu-memory-utilization") && !(dry_run && device.memory_bytes > 0)) {
    throw UsageError("--gpu-memory-utilization sizes the KV cache of a --dry-run on a --device-profile with memory");
  }
  if (dry_run && device.memory_bytes > 0 && !args.has("--kv-budget-mib")) {
    // As vLLM sizes its cache: a share of each device's memory, less its share of the weights.
    const double utilization = args.real("--gpu-memory-utilization", kGpuMemoryUtilization, 0.01, 1.0);
    const double room = utilization * device.memory_bytes - fit.weights_per_device();
    // (Weights beyond the whole memory are check_fits' to refuse.)
    if (room <= 0 && fit.weights_per_device() <= device.memory_bytes) {
      throw UsageError("the model's weights (" + format_number(fit.weights_per_device() / (1 << 30), "%.2f") +
                       " GiB per device) leave no room for a KV cache in " +
                       format_number(100 * utilization, "%.0f") + "% of " + device.name + "'s memory: raise "
                       "--gpu-memory-utilization, add --tensor-parallel devices or give --kv-budget-mib");
    }
    if (room > 0) config.kv.budget_bytes = static_cast<size_t>(room) * static_cast<size_t>(fit.devices);
  }
  fit.kv_budget_bytes = static_cast<double>(resolve_config(config, *model).kv.budget_bytes);
  fit.memory_bytes = device.memory_bytes;
  if (dry_run) check_fits(fit, device.name);

  const std::vector<Request> requests = materialize_workload(workload, prompt_encoder(*model), model->config().vocab_size,
                                                             static_cast<uint64_t>(args.integer("--seed", 1, 0, INT64_MAX)));
  WorkloadRunOptions run;
  run.sampling.ignore_eos = !args.has("--stop-at-eos");  // greedy; each request runs to its output_tokens
  if (dry_run) run.dry_run = pricing;
  WorkloadResult result;
  try {
    result = run_workload_on(LocalWorkload{model.get(), config}, requests, run);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  // Every engine setting as the run resolved it, then what the simulation adds.
  nlohmann::json config_json = config_overrides_of(result.config);
  config_json.update({{"kv_budget_bytes", result.config.kv.budget_bytes},
                      {"max_seq_len", result.config.kv.max_seq_len},
                      {"dry_run", dry_run},
                      // A dry run's device is the simulated one, not where the forward pass would run.
                      {"device", dry_run ? nlohmann::json(device.name) : config_json["device"]},
                      {"step_fixed_s", device.linear ? nlohmann::json(device.linear->fixed_s) : nlohmann::json()},
                      {"step_per_token_s", device.linear ? nlohmann::json(device.linear->per_token_s) : nlohmann::json()},
                      {"device_bandwidth_bytes_per_s", device.roofline ? nlohmann::json(device.roofline->bandwidth_bytes_per_s) : nlohmann::json()},
                      {"device_peak_flops", device.roofline ? nlohmann::json(device.roofline->peak_flops) : nlohmann::json()},
                      {"device_step_overhead_s", device.roofline ? nlohmann::json(device.roofline->step_overhead_s) : nlohmann::json()},
                      {"model_shape", model->has_file() ? nlohmann::json() : nlohmann::json(model->config().name)},
                      {"weights_type", args.has("--model-shape") ? nlohmann::json(args.str("--weights-type", "bf16")) : nlohmann::json()},
                      {"device_link", device.link_name.empty() ? nlohmann::json() : nlohmann::json(device.link_name)}});
  if (dry_run) config_json.update(fit.json());
  std::vector<std::string> header = local_header(result.summary, config_json, fit);
  return {std::move(result), std::move(config_json), std::move(header)};
}

}  // namespace

int cmd_serve_sim(int argc, char** argv) {
  const DryRunCost default_cost = default_dry_run_cost();
  std::vector<OptionSpec> specs = with_model_options({
      {"--workload", "-w", true, "workload JSON file (see resources/workloads/)"},
      {"--generate-workload", "", true, "instead of a file: N requests arriving at once, lengths uniform in..."},
      {"--prompt-len", "", true, "...A:B prompt tokens"},
      {"--output-len", "", true, "...C:D output tokens"},
      {"--seed", "", true, "seed of generated lengths and pseudo-random prompt ids (default 1)"},
      {"--max-seq-len", "", true, "contiguous KV: tokens reserved per request (default: the context length)"},
      {"--dry-run", "", false, "no forward pass: scheduler and KV manager only, on a virtual clock"},
      {"--step-fixed-ms", "", true,
       "dry run: modelled cost of a step (default " + format_number(default_cost.fixed_s * 1e3, "%.2f") + ")"},
      {"--step-per-token-ms", "", true,
       "dry run: modelled cost per token in a step (default " + format_number(default_cost.per_token_s * 1e3, "%.3f") + ")"},
      {"--device-profile", "", true,
       "dry run: price each step on a device (resources/devices/NAME.json, or a .json path): a roofline "
       "(h200, h100-sxm, a100-80gb, l40s, rtx-4090: max(bytes / bandwidth, FLOPs / peak) + overhead) or linear-cpu"},
      {"--tensor-parallel", "", true,
       "dry run on a roofline --device-profile: split the model over N devices (1/N of its weights, K/V and FLOPs on "
       "each, two all-reduces per layer over the profile's link); --kv-budget-mib is then per device"},
      {"--gpu-memory-utilization", "", true,
       "dry run on a --device-profile with memory: the share of each device's memory for weights and KV cache "
       "(default 0.9, as vLLM's); the KV budget is what the weights leave of it unless --kv-budget-mib gives one (not both)"},
      {"--stop-at-eos", "", false, "real run: end a request at an end-of-generation token (default: run to output_tokens)"},
      {"--metrics-json", "", true, "also write the whole run (summary, config, every request with its latencies, every engine step) to FILE"},
      {"--json", "", false, "print one JSON object instead of the summary"},
  });
  for (OptionSpec& s : shape_option_specs()) specs.push_back(s);
  for (OptionSpec& s : endpoint_option_specs()) specs.push_back(s);
  const std::vector<OptionSpec> remote_specs = remote_serve_sim_option_specs();
  specs.insert(specs.end(), remote_specs.begin(), remote_specs.end());
  if (print_help_if_asked("serve-sim (--model PATH | --model-shape NAME --dry-run [--weights-type T] | --endpoint URL (--tokenizer GGUF | --vocab-size N) [--max-concurrency C]) "
                          "(--workload FILE | --generate-workload N --prompt-len A:B "
                          "--output-len C:D [--seed S]) [--kv paged|contiguous] [--block-size N] [--kv-budget-mib M] "
                          "[--max-seq-len L] [--prefix-cache on|off] [--scheduler continuous|static] [--max-batch-tokens N] "
                          "[--max-running N] [--dry-run [--device-profile NAME [--tensor-parallel N]]] [--json] [--metrics-json FILE]",
                          specs, argc, argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  const std::vector<std::string> local_only = {"--dry-run", "--step-fixed-ms", "--step-per-token-ms", "--device-profile",
                                               "--max-seq-len", "--tensor-parallel"};
  if (args.has("--endpoint")) {
    refuse_local_options(args, option_names(model_option_specs()));
    refuse_local_options(args, option_names(shape_option_specs()));
    refuse_local_options(args, local_only);
  }
  for (const OptionSpec& remote_only : remote_specs) {
    if (!args.has("--endpoint") && args.has(remote_only.name)) throw UsageError(remote_only.name + " needs --endpoint");
  }
  const Workload workload = workload_from(args);
  emit_serve_sim_report(args, args.has("--endpoint") ? serve_sim_on_endpoint(args, workload) : serve_sim_locally(args, workload));
  return 0;
}

}  // namespace inferscope::cli
