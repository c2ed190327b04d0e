// Options shared by every subcommand that runs the model, and loading the model from them.
#pragma once
#include <memory>
#include <vector>

#include "core/cli/args.h"
#include "core/engine/engine_config.h"
#include "core/model/llama_model.h"
#include "core/quant/matrix_conversion.h"

namespace inferscope::cli {

// --model, --chat-template and every engine setting's flag (setting_table.h)
std::vector<OptionSpec> model_option_specs();
std::vector<OptionSpec> with_model_options(std::vector<OptionSpec> specs);

std::unique_ptr<LlamaModel> load_model(const Args& args);
// The engine configuration those options describe (a default KV budget of one full-context sequence);
// UsageError naming a bad value, an option the other settings leave without effect, or speculation
// that lacks what it needs.
EngineConfig engine_config(const Args& args);
// A level option (default native); UsageError naming the option, the value and the valid levels.
WeightQuant weight_quant(const Args& args, const std::string& option = "--quant", const std::string& fallback = "native");
// Prints "converting weights to LEVEL: NN% TENSOR" on one stderr line as a conversion advances.
ConversionProgressFn conversion_progress_printer(WeightQuant level);

}  // namespace inferscope::cli
