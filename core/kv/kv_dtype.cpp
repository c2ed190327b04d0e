#include "core/kv/kv_dtype.h"

#include <stdexcept>
#include <string>

namespace inferscope {

const std::vector<std::string>& kv_dtype_names() {
  static const std::vector<std::string> names{"f32", "f16", "q8"};
  return names;
}

std::optional<DType> kv_dtype_from_name(std::string_view name) {
  if (name == "f32") return DType::F32;
  if (name == "f16") return DType::F16;
  if (name == "q8") return DType::Q8_0;
  return std::nullopt;
}

std::string_view kv_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::Q8_0: return "q8";
    default:
      throw std::invalid_argument("KV cache dtype must be f32, f16 or q8, not " + std::string(dtype_name(dtype)));
  }
}

size_t kv_row_bytes(DType dtype, int32_t head_dim) {
  const std::string_view name = kv_dtype_name(dtype);  // throws for a dtype the cache cannot hold
  if (head_dim <= 0) {
    throw std::invalid_argument("KV cache: head dimension must be positive, not " + std::to_string(head_dim));
  }
  const int64_t block = dtype_info(dtype).block_size;
  if (head_dim % block != 0) {
    throw std::invalid_argument("--kv-dtype " + std::string(name) + " needs a head dimension that is a multiple of " +
                                std::to_string(block) + " (this model: " + std::to_string(head_dim) + ")");
  }
  return row_bytes(dtype, head_dim);
}

}  // namespace inferscope
