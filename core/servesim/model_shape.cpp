#include "core/servesim/model_shape.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/common/json_field.h"
#include "core/common/data_file.h"

namespace inferscope {
namespace {

// A positive whole-number field (a fraction or a string is refused, not rounded).
int32_t positive_count(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw std::runtime_error(where + ": field '" + key + "' is missing");
  const nlohmann::json& v = j.at(key);
  if (!v.is_number_integer()) {
    throw std::runtime_error(where + ": field '" + key + "' must be a whole number, not " + v.dump());
  }
  const int64_t n = v.get<int64_t>();
  if (n <= 0 || n > std::numeric_limits<int32_t>::max()) {
    throw std::runtime_error(where + ": field '" + key + "' must be positive (and below 2^31), not " + v.dump());
  }
  return static_cast<int32_t>(n);
}

}  // namespace

ModelShape read_model_shape(const std::string& path) {
  return model_shape_from_json(read_json_object(path, "model shape"), path);
}

ModelShape model_shape_from_json(const nlohmann::json& j, const std::string& path) {
  ModelShape s;
  s.name = json_field<std::string>(j, "name", path);
  s.source = json_field<std::string>(j, "source", path);
  s.layers = positive_count(j, "layers", path);
  s.hidden_size = positive_count(j, "hidden_size", path);
  s.heads = positive_count(j, "heads", path);
  s.kv_heads = positive_count(j, "kv_heads", path);
  s.head_dim = positive_count(j, "head_dim", path);
  s.ffn_size = positive_count(j, "ffn_size", path);
  s.vocab_size = positive_count(j, "vocab_size", path);
  s.context_length = positive_count(j, "context_length", path);
  s.tied_embeddings = json_field<bool>(j, "tied_embeddings", path);
  if (s.heads % s.kv_heads != 0) {
    throw std::runtime_error(path + ": field 'heads' (" + std::to_string(s.heads) +
                             ") must be a multiple of field 'kv_heads' (" + std::to_string(s.kv_heads) + ")");
  }
  return s;
}

std::string model_shape_path(const std::string& name_or_path) { return data_file_path("model-shapes", name_or_path); }

}  // namespace inferscope
