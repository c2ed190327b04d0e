// Tensor element types, numbered as GGUF/ggml numbers them, and their block geometry.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace inferscope {

// Values are the ggml_type ids stored in GGUF tensor infos.
enum class DType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  BF16 = 30,
};

struct DTypeInfo {
  DType type;
  std::string_view name;  // "f32", "q4_1", "q4_K", ... (ggml's spelling; dtype_from_name ignores case)
  int64_t block_size;     // elements per block (1 for plain floats)
  size_t block_bytes;     // bytes per block
  bool can_load;          // we can dequantize it (Q2_K/Q3_K are known but not supported)
};

// nullopt for an id we do not know (the GGUF reader reports it as an unknown type).
std::optional<DTypeInfo> dtype_info(uint32_t raw_type);
const DTypeInfo& dtype_info(DType type);
std::string_view dtype_name(DType type);
std::optional<DType> dtype_from_name(std::string_view name);

// Bytes of a row of n elements; n must be a multiple of the block size.
size_t row_bytes(DType type, int64_t n);

}  // namespace inferscope
