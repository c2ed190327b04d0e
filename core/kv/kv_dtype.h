// The precisions a KV cache stores K and V in: f32, f16 (the default, as llama.cpp and vLLM) and q8
// (Q8_0: blocks of 32 int8 values with one f16 scale, 34 bytes per 32 elements). A cached row is one
// token's K (or V) of one KV head: head_dim elements, head_dim / 32 blocks in q8.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/format/dtype.h"

namespace inferscope {

// "f32", "f16", "q8" (the --kv-dtype spellings), in that order.
const std::vector<std::string>& kv_dtype_names();
// F32, F16 or Q8_0 for one of kv_dtype_names(); nullopt for anything else.
std::optional<DType> kv_dtype_from_name(std::string_view name);
// The --kv-dtype spelling of a KV dtype ("q8" for Q8_0); throws std::invalid_argument for another type.
std::string_view kv_dtype_name(DType dtype);

// Bytes of one cached row of head_dim elements. Throws std::invalid_argument naming the value when
// the cache cannot store it: a dtype other than f32/f16/q8, a head_dim that is not positive, or q8
// with a head_dim that is not a multiple of 32.
size_t kv_row_bytes(DType dtype, int32_t head_dim);

}  // namespace inferscope
