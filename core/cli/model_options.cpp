#include "core/cli/model_options.h"

#include <iomanip>
#include <iostream>
#include <memory>

#include "core/engine/setting_table.h"

namespace inferscope::cli {

std::vector<OptionSpec> model_option_specs() {
  std::vector<OptionSpec> specs = {
      {"--model", "-m", true, "GGUF model file"},
      {"--chat-template", "", true, "override the chat template: chatml|llama2|llama3|zephyr|mistral|gemma|phi3"},
  };
  for (const EngineSetting& s : engine_settings()) specs.push_back({s.flag, s.alias, true, s.help});
  return specs;
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

namespace {

// What speculation still lacks to run: a draft model, the early-exit depth, n-gram sizes in order.
void check_spec_complete(const SpecConfig& spec) {
  if (spec.mode == SpecMode::Draft && spec.draft_model.empty()) throw UsageError("--spec draft needs --draft-model PATH");
  if (spec.mode == SpecMode::EarlyExit && spec.draft_layers == 0) throw UsageError("--spec early-exit needs --draft-layers L");
  if (spec.mode == SpecMode::Ngram && spec.ngram_min > spec.ngram_max) {
    throw UsageError("--ngram-min " + std::to_string(spec.ngram_min) + " is above --ngram-max " +
                     std::to_string(spec.ngram_max));
  }
}

}  // namespace

EngineConfig engine_config(const Args& args) {
  EngineConfig c;
  c.budget_sequences = 1;  // the default budget: one sequence of the full context
  for (const EngineSetting& s : engine_settings()) {
    if (!args.has(s.flag)) continue;
    const std::string value = args.str(s.flag, "");
    try {
      s.set(c, value);
    } catch (const SettingError& e) {
      throw UsageError(s.flag + ": '" + value + "' " + e.what());
    }
  }
  // An option the other settings make meaningless would be silently ignored: refuse it by name.
  for (const EngineSetting& s : engine_settings()) {
    if (args.has(s.flag) && !s.applies_to(c)) throw UsageError(s.flag + " needs " + s.applies_when);
  }
  check_spec_complete(c.spec);
  return c;
}

}  // namespace inferscope::cli
