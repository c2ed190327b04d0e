// The one rule for 'general.alignment', shared by the GGUF reader and writer.
#pragma once
#include <cstdint>
#include <string>

#include "core/gguf/gguf_value.h"

namespace inferscope {

// Tensor data is read through casts to its element types, so every tensor must start 8-aligned.
inline constexpr uint64_t kMinGgufAlignment = 8;

struct GgufAlignmentCheck {
  uint64_t alignment = 0;  // valid only when `problem` is empty
  std::string problem;     // e.g. "48 is not a positive power of two"; the caller names file and key
};

// Accepts integer values that are powers of two and multiples of kMinGgufAlignment.
GgufAlignmentCheck check_gguf_alignment(const GgufValue& value);

}  // namespace inferscope
