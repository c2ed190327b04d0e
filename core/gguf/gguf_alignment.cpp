#include "core/gguf/gguf_alignment.h"

#include <bit>

namespace inferscope {

GgufAlignmentCheck check_gguf_alignment(const GgufValue& value) {
  if (!value.is_integer()) return {0, std::string(gguf_type_name(value.type)) + " is not an integer"};
  // A signed key may hold a negative value: show it as stored, not as a wrapped uint64.
  if (const auto* i = std::get_if<int64_t>(&value.v); i && *i <= 0)
    return {0, std::to_string(*i) + " is not a positive power of two"};
  const auto* u = std::get_if<uint64_t>(&value.v);
  const uint64_t a = u ? *u : static_cast<uint64_t>(std::get<int64_t>(value.v));
  if (!std::has_single_bit(a)) return {0, std::to_string(a) + " is not a positive power of two"};
  if (a % kMinGgufAlignment != 0)
    return {0, std::to_string(a) + " is not a multiple of " + std::to_string(kMinGgufAlignment) +
                   " (tensor data would be misaligned)"};
  return {a, {}};
}

}  // namespace inferscope
