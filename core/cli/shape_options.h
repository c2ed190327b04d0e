// serve-sim --dry-run without a model file: --model-shape NAME|PATH and --weights-type, and the model
// they make (or the --model file's, when that is given instead).
#pragma once
#include <memory>
#include <vector>

#include "core/cli/args.h"
#include "core/model/llama_model.h"
#include "core/workload/workload.h"

namespace inferscope::cli {

// --model-shape, --weights-type
std::vector<OptionSpec> shape_option_specs();

// The --model file's model, or (--model-shape) a shape-only one priced at --weights-type (default
// bf16). UsageError when both or neither of --model and --model-shape are given, for --model-shape
// without --dry-run or with --quant, for --weights-type without --model-shape, and for a bad shape
// file (naming the file, the field and the value) or weights type.
std::unique_ptr<LlamaModel> load_model_or_shape(const Args& args);

// How a workload's text prompts become ids on `model`: its tokenizer, or for a shape-only model
// (no tokenizer) a UsageError that asks for token-count prompts.
Encoder prompt_encoder(const LlamaModel& model);

}  // namespace inferscope::cli
