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
       "weight format: native (default, the file's own) | f32 | f16 | q8 | q4 | q4_1 (converted after loading)"},
      {"--ctx", "-c", true, "context length (default: the model's)"},
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

WeightQuant weight_quant(const Args& args, const std::string& option) {
  try {
    return parse_weight_quant(args.str(option, "native"));
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

EngineConfig engine_config(const Args& args) {
  EngineConfig c;
  c.threads = static_cast<int32_t>(args.integer("--threads", 0, 0, 1024));
  c.kv_dtype = *kv_dtype_from_name(args.choice("--kv-dtype", "f16", kv_dtype_names()));
  c.context_length = static_cast<int32_t>(args.integer("--ctx", 0, 0, 1 << 24));
  c.attention = args.choice("--attention", "flash", {"flash", "naive"});
  c.kv.kind = *kv_kind_from_name(args.choice("--kv", "paged", {"paged", "contiguous"}));
  c.kv.block_size = std::stoi(args.choice("--block-size", "16", {"8", "16", "32"}));
  c.kv.budget_bytes = static_cast<size_t>(args.integer("--kv-budget-mib", 0, 1, 1 << 20)) << 20;
  c.kv.prefix_cache = args.choice("--prefix-cache", "on", {"on", "off"}) == "on";
  c.budget_sequences = 1;  // the default budget: one sequence of the full context
  c.matmul.activations = args.choice("--activations", "f32", {"f32", "q8"}) == "q8" ? ActivationPrecision::Q8
                                                                                     : ActivationPrecision::F32;
  c.quant = weight_quant(args);
  c.scheduler.policy = *scheduler_policy_from_name(args.choice("--scheduler", "continuous", {"continuous", "static"}));
  c.scheduler.max_batch_tokens = static_cast<int32_t>(args.integer("--max-batch-tokens", 0, 0, INT32_MAX));
  c.scheduler.max_running = static_cast<int32_t>(args.integer("--max-running", 0, 0, INT32_MAX));
  return c;
}

}  // namespace inferscope::cli
