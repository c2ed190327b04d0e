// A model's shape without its weights, as data (resources/model-shapes/NAME.json): what a dry run
// needs to price steps on a device (serve-sim --dry-run --model-shape NAME) with no model file.
//   {"name": "Llama-3-8B", "layers": 32, "hidden_size": 4096, "heads": 32, "kv_heads": 8,
//    "head_dim": 128, "ffn_size": 14336, "vocab_size": 128256, "tied_embeddings": false,
//    "context_length": 8192, "source": "meta-llama/Meta-Llama-3-8B config.json: ..."}
#pragma once
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace inferscope {

struct ModelShape {
  std::string name;
  std::string source;  // where the figures come from (the model's published config.json)
  int32_t layers = 0, hidden_size = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn_size = 0, vocab_size = 0;
  int32_t context_length = 0;
  bool tied_embeddings = false;  // the output head reuses the token embedding
};

// The shape in `path`. Throws std::runtime_error naming the file, the field and the value for a
// missing, mistyped or non-positive field, or heads not divisible by kv_heads.
ModelShape read_model_shape(const std::string& path);
// The shape in `j`, the JSON object of the file `path` (named in errors as read_model_shape's).
ModelShape model_shape_from_json(const nlohmann::json& j, const std::string& path);

// `name_or_path` as a file: a .json path as given, else resources/model-shapes/NAME.json (data_file_path).
std::string model_shape_path(const std::string& name_or_path);

}  // namespace inferscope
