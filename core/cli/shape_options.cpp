#include "core/cli/shape_options.h"

#include <stdexcept>
#include <string>

#include "core/cli/model_options.h"
#include "core/servesim/shape_model.h"
#include "core/servesim/model_shape.h"

namespace inferscope::cli {

std::vector<OptionSpec> shape_option_specs() {
  return {
      {"--model-shape", "", true,
       "dry run without a model file: the model's shape (resources/model-shapes/NAME.json, e.g. llama-3-8b, "
       "llama-3-70b, llama-3.2-1b, smollm2-135m, or a .json path); instead of --model"},
      {"--weights-type", "", true, "--model-shape: the format its weights are priced at, " + shape_weights_types() +
                                       " (default bf16; q4_k is the Q4_K_M mix)"},
  };
}

std::unique_ptr<LlamaModel> load_model_or_shape(const Args& args) {
  if (!args.has("--model-shape")) {
    if (args.has("--weights-type")) throw UsageError("--weights-type prices a --model-shape; a --model file has --quant");
    return load_model(args);
  }
  if (args.has("--model")) throw UsageError("give either --model FILE or --model-shape NAME, not both");
  if (!args.has("--dry-run")) throw UsageError("--model-shape has no weights to run: it needs --dry-run");
  if (args.has("--quant")) throw UsageError("--quant converts a --model file's weights; a --model-shape has --weights-type");
  const std::string path = model_shape_path(args.str("--model-shape", ""));
  ModelShape shape;
  try {
    shape = read_model_shape(path);
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string("--model-shape: ") + e.what());
  }
  try {
    return model_of_shape(shape, args.str("--weights-type", "bf16"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--weights-type: ") + e.what());
  }
}

Encoder prompt_encoder(const LlamaModel& model) {
  if (!model.has_file()) {
    return [](std::string_view text, bool) -> std::vector<TokenId> {
      throw UsageError("--model-shape has no tokenizer, so a workload's prompts must be token counts "
                       "(\"prompt_tokens\"), not text (\"" + std::string(text.substr(0, 40)) + "\")");
    };
  }
  return [&model](std::string_view text, bool add_bos) { return model.tokenizer().encode(text, add_bos); };
}

}  // namespace inferscope::cli
