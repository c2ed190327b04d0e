#include "core/cli/model_options.h"

#include <iomanip>
#include <iostream>
#include <memory>

#include "core/kv/kv_dtype.h"

namespace inferscope::cli {

std::vector<OptionSpec> model_option_specs() {
  return {
      {"--model", "-m", true, "GGUF model file"},
      {"--threads", "-t", true, "worker threads (default: all cores)"},
      {"--kv-dtype", "", true, "KV cache precision: f16 (default) | f32 | q8 (int8 blocks of 32 with a scale)"},
      {"--activations", "", true, "how activations meet quantized weights: f32 (default, exact) | q8 (int8, as llama.cpp)"},
      {"--quant", "", true,
       "weight format: native (default, the file's own) | f32 | f16 | q8 | q4 | q4_1 | q4_k (Q4_K_M mix) | q6_k "
       "(converted after loading)"},
      {"--ctx", "-c", true, "context length (default: the model's)"},
      {"--device", "", true, "where the forward pass runs: cpu (default) | cuda | cuda:N (a CUDA build and device)"},
      {"--attention", "", true, "attention: flash (default, tiled with online softmax) | naive (full score matrix)"},
      {"--kv", "", true, "KV cache manager: paged (default, PagedAttention blocks) | contiguous (one reservation per sequence)"},
      {"--block-size", "", true, "paged KV: tokens per block, 8 | 16 (default) | 32"},
      {"--kv-budget-mib", "", true, "KV cache memory in MiB (default: room for the full context)"},
      {"--prefix-cache", "", true, "paged KV: reuse cached blocks of identical prompt prefixes, on (default) | off"},
      {"--chat-template", "", true, "override the chat template: chatml|llama2|llama3|zephyr|mistral|gemma|phi3"},
      {"--scheduler", "", true, "continuous (default: every step admits) or static (a batch runs until its longest ends)"},
      {"--max-batch-tokens", "", true,
       "tokens computed per step at most; prompts go in chunks behind decodes (default: no limit; 1 = token by token)"},
      {"--max-running", "", true, "requests running at once at most (default: no limit)"},
      {"--spec", "", true, "speculative decoding (default none): " + spec_mode_help()},
      {"--spec-k", "", true,
       "speculation: draft tokens per step, auto (default: chosen per sequence from its acceptance and the measured "
       "step costs, up to 8; none where drafts would not pay) or a fixed 1-16"},
      {"--ngram-min", "", true, "ngram speculation: the shortest match that drafts, 1-16 tokens (default 2)"},
      {"--ngram-max", "", true, "ngram speculation: the longest match compared, 1-16 tokens (default 8); a draft is no longer than its match"},
      {"--draft-model", "", true, "draft speculation: a GGUF with the target's vocabulary"},
      {"--draft-quant", "", true, "self-quant speculation: the draft's level, q4 (default) | q4_1 | q8"},
      {"--draft-layers", "", true, "early-exit speculation: the target's first L layers draft (1 .. layers-1)"},
      {"--draft-p-min", "", true, "model drafts stop when their top probability falls below this, 0-1 (default 0)"},
  };
}

std::vector<OptionSpec> with_model_options(std::vector<OptionSpec> specs) {
  for (OptionSpec& s : model_option_specs()) specs.push_back(std::move(s));
  return specs;
}

std::unique_ptr<LlamaModel> load_model(const Args& args) {
  ModelLoadOptions options;
  options.chat_template_override = args.str("--chat-template", "");
  auto model = LlamaModel::load(args.required("--model"), options);
  if (!model->chat_template_warning().empty()) std::cerr << "warning: " << model->chat_template_warning() << "\n";
  return model;
}

WeightQuant weight_quant(const Args& args, const std::string& option, const std::string& fallback) {
  try {
    return parse_weight_quant(args.str(option, fallback));
  } catch (const std::invalid_argument& e) {
    throw UsageError(option + ": " + e.what());
  }
}

ConversionProgressFn conversion_progress_printer(WeightQuant level) {
  const std::string label = "converting weights to " + std::string(weight_quant_name(level));
  auto last_percent = std::make_shared<int>(-1);
  return [label, last_percent](double fraction, const std::string& tensor) {
    if (tensor.empty()) return;  // nothing needed converting
    const int percent = static_cast<int>(fraction * 100.0);
    if (percent == *last_percent) return;
    *last_percent = percent;
    // One line rewritten in place; the padding covers a longer tensor name printed before.
    std::cerr << "\r" << label << ": " << std::setw(3) << percent << "% " << std::left << std::setw(32) << tensor
              << std::right << (percent == 100 ? "\n" : "") << std::flush;
  };
}

SpecConfig spec_config(const Args& args) {
  SpecConfig spec;
  std::vector<std::string> modes;
  for (const SpecModeInfo& m : kSpecModes) modes.emplace_back(m.name);
  spec.mode = *spec_mode_from_name(args.choice("--spec", "none", modes));
  spec.k = args.str("--spec-k", "auto") == "auto" ? SpecConfig::kAutoK
                                                 : static_cast<int32_t>(args.integer("--spec-k", 0, 1, 16));
  spec.ngram_min = static_cast<int32_t>(args.integer("--ngram-min", 2, 1, 16));
  spec.ngram_max = static_cast<int32_t>(args.integer("--ngram-max", 8, 1, 16));
  spec.draft_model = args.str("--draft-model", "");
  spec.draft_quant = weight_quant(args, "--draft-quant", "q4");
  spec.draft_layers = static_cast<int32_t>(args.integer("--draft-layers", 0, 1, 1 << 16));
  spec.draft_p_min = static_cast<float>(args.real("--draft-p-min", 0.0, 0.0, 1.0));
  // Options of another mode would be silently ignored: refuse them by name.
  const auto only_with = [&](const char* option, SpecMode mode) {
    if (args.has(option) && spec.mode != mode) {
      throw UsageError(std::string(option) + " needs --spec " + std::string(spec_mode_name(mode)));
    }
  };
  only_with("--draft-model", SpecMode::Draft);
  only_with("--draft-quant", SpecMode::SelfQuant);
  only_with("--draft-layers", SpecMode::EarlyExit);
  only_with("--ngram-min", SpecMode::Ngram);
  only_with("--ngram-max", SpecMode::Ngram);
  if (spec.mode == SpecMode::Draft && spec.draft_model.empty()) throw UsageError("--spec draft needs --draft-model PATH");
  if (spec.mode == SpecMode::EarlyExit && !args.has("--draft-layers")) {
    throw UsageError("--spec early-exit needs --draft-layers L");
  }
  if (spec.mode == SpecMode::Ngram && spec.ngram_min > spec.ngram_max) {
    throw UsageError("--ngram-min " + std::to_string(spec.ngram_min) + " is above --ngram-max " +
                     std::to_string(spec.ngram_max));
  }
  return spec;
}

ComputeDevice compute_device(const Args& args) {
  const std::string name = args.str("--device", "cpu");
  const std::optional<ComputeDevice> device = compute_device_from_name(name);
  if (!device) throw UsageError("--device: '" + name + "' is not a device (cpu, cuda or cuda:N)");
  return *device;
}

EngineConfig engine_config(const Args& args) {
  EngineConfig c;
  c.threads = static_cast<int32_t>(args.integer("--threads", 0, 0, 1024));
  c.kv_dtype = *kv_dtype_from_name(args.choice("--kv-dtype", "f16", kv_dtype_names()));
  c.context_length = static_cast<int32_t>(args.integer("--ctx", 0, 0, 1 << 24));
  c.attention = args.choice("--attention", "flash", {"flash", "naive"});
  c.device = compute_device(args);
  c.kv.kind = *kv_kind_from_name(args.choice("--kv", "paged", {"paged", "contiguous"}));
  c.kv.block_size = std::stoi(args.choice("--block-size", "16", {"8", "16", "32"}));
  c.kv.budget_bytes = static_cast<size_t>(args.integer("--kv-budget-mib", 0, 1, 1 << 20)) << 20;
  c.kv.prefix_cache = args.choice("--prefix-cache", "on", {"on", "off"}) == "on";
  c.budget_sequences = 1;  // the default budget: one sequence of the full context
  c.forward.matmul.activations = args.choice("--activations", "f32", {"f32", "q8"}) == "q8" ? ActivationPrecision::Q8
                                                                                     : ActivationPrecision::F32;
  c.quant = weight_quant(args);
  c.scheduler.policy = *scheduler_policy_from_name(args.choice("--scheduler", "continuous", {"continuous", "static"}));
  c.scheduler.max_batch_tokens = static_cast<int32_t>(args.integer("--max-batch-tokens", 0, 0, INT32_MAX));
  c.scheduler.max_running = static_cast<int32_t>(args.integer("--max-running", 0, 0, INT32_MAX));
  c.spec = spec_config(args);
  return c;
}

}  // namespace inferscope::cli
