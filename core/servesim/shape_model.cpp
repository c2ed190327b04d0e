#include "core/servesim/shape_model.h"

#include <stdexcept>

#include "core/quant/weight_quant.h"

namespace inferscope {
namespace {

LlamaConfig config_of(const ModelShape& shape) {
  LlamaConfig c;
  c.architecture = "llama";
  c.traits = *find_architecture("llama");
  c.name = shape.name;
  c.n_layers = shape.layers;
  c.dim = shape.hidden_size;
  c.n_heads = shape.heads;
  c.n_kv_heads = shape.kv_heads;
  c.head_dim = shape.head_dim;
  c.head_dim_from_key_length = shape.head_dim * shape.heads != shape.hidden_size;
  c.ffn_dim = shape.ffn_size;
  c.vocab_size = shape.vocab_size;
  c.context_length = shape.context_length;
  c.rope_dim = shape.head_dim;
  c.tied_output = shape.tied_embeddings;
  return c;
}

}  // namespace

std::string shape_weights_types() {
  const std::string levels = weight_quant_names();
  return "bf16, " + levels.substr(levels.find(", ") + 2);  // every level but the first, native
}

std::unique_ptr<LlamaModel> model_of_shape(const ModelShape& shape, std::string_view weights_type) {
  const LlamaConfig config = config_of(shape);
  if (weights_type == "bf16") {
    return LlamaModel::shape_only(config, [](std::string_view, int64_t) { return DType::BF16; });
  }
  const std::optional<WeightQuant> level = weight_quant_from_name(weights_type);
  if (!level || *level == WeightQuant::Native) {
    throw std::invalid_argument("weights type '" + std::string(weights_type) + "' is not one of " + shape_weights_types());
  }
  // The policy a conversion of a real file uses, from f32 source matrices.
  return LlamaModel::shape_only(config, [&](std::string_view tensor, int64_t cols) {
    return matrix_format(*level, DType::F32, cols, matrix_place(tensor, config.n_layers, config.tied_output)).stored;
  });
}

}  // namespace inferscope
