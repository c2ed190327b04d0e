// The table of element types: ggml id, name, block geometry, and whether we can read each one.
#include "kernels/format/dtype.h"

#include <array>
#include <stdexcept>
#include <string>

#include "kernels/format/quant_blocks.h"

namespace inferscope {
namespace {

// Q2_K and Q3_K layouts (not in quant_blocks.h since we do not decode them):
// Q2_K = scales[16] + qs[64] + d + dmin; Q3_K = hmask[32] + qs[64] + scales[12] + d.
constexpr size_t kQ2KBytes = QK_K / 16 + QK_K / 4 + 2 * sizeof(f16_bits);
constexpr size_t kQ3KBytes = QK_K / 8 + QK_K / 4 + 12 + sizeof(f16_bits);

constexpr std::array kTable = {
    DTypeInfo{DType::F32, "f32", 1, sizeof(float), true},
    DTypeInfo{DType::F16, "f16", 1, sizeof(f16_bits), true},
    DTypeInfo{DType::Q4_0, "q4_0", QK4_0, sizeof(BlockQ4_0), true},
    DTypeInfo{DType::Q4_1, "q4_1", QK4_1, sizeof(BlockQ4_1), true},
    DTypeInfo{DType::Q5_0, "q5_0", QK5_0, sizeof(BlockQ5_0), true},
    DTypeInfo{DType::Q5_1, "q5_1", QK5_1, sizeof(BlockQ5_1), true},
    DTypeInfo{DType::Q8_0, "q8_0", QK8_0, sizeof(BlockQ8_0), true},
    DTypeInfo{DType::Q8_1, "q8_1", QK8_1, sizeof(BlockQ8_1), true},
    DTypeInfo{DType::Q2_K, "q2_K", QK_K, kQ2KBytes, false},
    DTypeInfo{DType::Q3_K, "q3_K", QK_K, kQ3KBytes, false},
    DTypeInfo{DType::Q4_K, "q4_K", QK_K, sizeof(BlockQ4_K), true},
    DTypeInfo{DType::Q5_K, "q5_K", QK_K, sizeof(BlockQ5_K), true},
    DTypeInfo{DType::Q6_K, "q6_K", QK_K, sizeof(BlockQ6_K), true},
    DTypeInfo{DType::Q8_K, "q8_K", QK_K, sizeof(BlockQ8_K), true},
    DTypeInfo{DType::BF16, "bf16", 1, sizeof(bf16_bits), true},
};

static_assert(kQ2KBytes == 84 && kQ3KBytes == 110);

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

}  // namespace

std::optional<DTypeInfo> dtype_info(uint32_t raw_type) {
  for (const DTypeInfo& info : kTable) {
    if (static_cast<uint32_t>(info.type) == raw_type) return info;
  }
  return std::nullopt;
}

const DTypeInfo& dtype_info(DType type) {
  for (const DTypeInfo& info : kTable) {
    if (info.type == type) return info;
  }
  throw std::invalid_argument("unknown dtype id " + std::to_string(static_cast<uint32_t>(type)));
}

std::string_view dtype_name(DType type) { return dtype_info(type).name; }

// Case-insensitive, so "Q4_K", "q4_k" and "q4_K" all name the same type.
std::optional<DType> dtype_from_name(std::string_view name) {
  for (const DTypeInfo& info : kTable) {
    if (iequals(info.name, name)) return info.type;
  }
  return std::nullopt;
}

size_t row_bytes(DType type, int64_t n) {
  const DTypeInfo& info = dtype_info(type);
  if (n < 0 || n % info.block_size != 0) {
    throw std::invalid_argument("row of " + std::to_string(n) + " elements is not a whole number of " +
                                std::string(info.name) + " blocks of " + std::to_string(info.block_size));
  }
  return static_cast<size_t>(n / info.block_size) * info.block_bytes;
}

}  // namespace inferscope
