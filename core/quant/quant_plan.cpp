#include "core/quant/quant_plan.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/gguf/gguf_file.h"

namespace inferscope {

MatrixPlace tensor_place(const GgufFile& file, std::string_view name) {
  const std::string block_count = file.get_string("general.architecture") + ".block_count";
  const bool tied = file.find_tensor("output.weight") == nullptr;
  return matrix_place(name, static_cast<int32_t>(file.get_int(block_count)), tied);
}

uint64_t TensorFormat::bytes() const { return static_cast<uint64_t>(rows) * row_bytes(format.stored, cols); }

std::vector<TensorFormat> plan_formats(const GgufFile& file, WeightQuant level) {
  std::vector<TensorFormat> plan;
  for (const GgufTensorInfo& t : file.tensors()) {
    if (t.dims.size() != 2) continue;
    const MatrixFormat format = matrix_format(level, t.type, t.dims[0], tensor_place(file, t.name));
    plan.push_back(TensorFormat{t.name, t.type, format, t.dims[1], t.dims[0]});
  }
  return plan;
}

std::vector<MatrixFallback> fallbacks_of(std::span<const TensorFormat> plan) {
  std::vector<MatrixFallback> out;
  for (const TensorFormat& t : plan) {
    if (t.format.fallback()) out.push_back(MatrixFallback{t.name, t.format});
  }
  return out;
}

std::vector<FormatTotal> format_totals(std::span<const TensorFormat> plan) {
  std::map<std::string, FormatTotal> by_type;
  for (const TensorFormat& t : plan) {
    FormatTotal& total = by_type[std::string(dtype_name(t.format.stored))];
    ++total.tensors;
    total.bytes += t.bytes();
  }
  std::vector<FormatTotal> out;
  for (auto& [type, total] : by_type) {
    total.type = type;
    out.push_back(total);
  }
  return out;
}

std::string fallback_summary(std::span<const MatrixFallback> fallbacks) {
  std::vector<std::pair<MatrixFormat, int>> counts;
  for (const MatrixFallback& f : fallbacks) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) {
      return c.first.wanted == f.format.wanted && c.first.stored == f.format.stored;
    });
    if (it == counts.end()) {
      counts.emplace_back(f.format, 1);
    } else {
      ++it->second;
    }
  }
  std::string text;
  for (const auto& [format, n] : counts) {
    text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(dtype_name(format.wanted)) + " -> " +
            std::string(dtype_name(format.stored));
  }
  return text;
}

}  // namespace inferscope
