#include "core/quant/weight_quant.h"

#include <stdexcept>

namespace inferscope {
namespace {

struct LevelInfo {
  WeightQuant level;
  std::string_view name;
  std::optional<DType> type;
  uint32_t file_type;  // llama_ftype
};

constexpr LevelInfo kLevels[] = {
    {WeightQuant::Native, "native", std::nullopt, 0}, {WeightQuant::F32, "f32", DType::F32, 0},
    {WeightQuant::F16, "f16", DType::F16, 1},         {WeightQuant::Q8, "q8", DType::Q8_0, 7},
    {WeightQuant::Q4, "q4", DType::Q4_0, 2},          {WeightQuant::Q4_1, "q4_1", DType::Q4_1, 3},
};

const LevelInfo& info(WeightQuant level) {
  for (const LevelInfo& l : kLevels) {
    if (l.level == level) return l;
  }
  throw std::invalid_argument("unknown weight quantization level " + std::to_string(static_cast<int>(level)));
}

}  // namespace

std::string_view weight_quant_name(WeightQuant level) { return info(level).name; }

std::optional<WeightQuant> weight_quant_from_name(std::string_view name) {
  for (const LevelInfo& l : kLevels) {
    if (l.name == name) return l.level;
  }
  return std::nullopt;
}

std::string weight_quant_names() {
  std::string names;
  for (const LevelInfo& l : kLevels) names += (names.empty() ? "" : ", ") + std::string(l.name);
  return names;
}

WeightQuant parse_weight_quant(std::string_view name) {
  if (auto level = weight_quant_from_name(name)) return *level;
  throw std::invalid_argument("unknown quantization level '" + std::string(name) + "' (valid: " + weight_quant_names() +
                              ")");
}

std::optional<DType> weight_quant_dtype(WeightQuant level) { return info(level).type; }

MatrixRole matrix_role(std::string_view name) {
  if (name == "token_embd.weight") return MatrixRole::Embedding;
  if (name == "output.weight") return MatrixRole::Output;
  return MatrixRole::Layer;
}

DType stored_type(WeightQuant level, DType source, int64_t cols, MatrixRole role) {
  std::optional<DType> target = info(level).type;
  if (!target) return source;
  const bool four_bit = level == WeightQuant::Q4 || level == WeightQuant::Q4_1;
  if (four_bit && role != MatrixRole::Layer) target = DType::Q8_0;
  return cols % dtype_info(*target).block_size == 0 ? *target : DType::F16;
}

bool is_f16_fallback(WeightQuant level, DType stored) {
  const std::optional<DType> type = info(level).type;
  return stored == DType::F16 && type && *type != DType::F16;
}

uint32_t llama_file_type(WeightQuant level) {
  if (level == WeightQuant::Native) throw std::invalid_argument("the native level keeps the file's own types");
  return info(level).file_type;
}

}  // namespace inferscope
