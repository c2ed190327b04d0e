// A model made from a shape file (resources/model-shapes) instead of a GGUF file, with its matrices
// priced at one weight format: what serve-sim --dry-run --model-shape runs on.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "core/model/llama_model.h"
#include "core/servesim/model_shape.h"

namespace inferscope {

// The formats a shape's weights can be priced at: "bf16", or a weight level other than native
// (its per-matrix policy, as a conversion of a real file at that level would store each matrix).
std::string shape_weights_types();

// A shape-only LlamaModel (plain Llama architecture) of `shape`. Throws std::invalid_argument naming
// `weights_type` when it is not one of shape_weights_types().
std::unique_ptr<LlamaModel> model_of_shape(const ModelShape& shape, std::string_view weights_type);

}  // namespace inferscope
