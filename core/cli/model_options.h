// Options shared by every subcommand that runs the model, and loading the model from them.
#pragma once
#include <memory>
#include <vector>

#include "core/cli/args.h"
#include "core/engine/engine_config.h"
#include "core/model/llama_model.h"
#include "core/quant/matrix_conversion.h"

namespace inferscope::cli {

// --model, --device, --threads, --kv-dtype, --activations, --quant, --attention, --ctx, --kv, --block-size, --kv-budget-mib,
// --prefix-cache, --chat-template, --scheduler, --max-batch-tokens, --max-running, --spec and its options
std::vector<OptionSpec> model_option_specs();
std::vector<OptionSpec> with_model_options(std::vector<OptionSpec> specs);

std::unique_ptr<LlamaModel> load_model(const Args& args);
// The engine configuration those options describe (a default KV budget of one full-context sequence).
EngineConfig engine_config(const Args& args);
// --device (default cpu); UsageError naming a value that is not cpu, cuda or cuda:N.
ComputeDevice compute_device(const Args& args);
// A level option (default native); UsageError naming the option, the value and the valid levels.
WeightQuant weight_quant(const Args& args, const std::string& option = "--quant", const std::string& fallback = "native");
// --spec and its options; UsageError for an option of another mode or a mode without its option.
SpecConfig spec_config(const Args& args);
// Prints "converting weights to LEVEL: NN% TENSOR" on one stderr line as a conversion advances.
ConversionProgressFn conversion_progress_printer(WeightQuant level);

}  // namespace inferscope::cli
