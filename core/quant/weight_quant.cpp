#include "core/quant/weight_quant.h"

#include <charconv>
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
    {WeightQuant::Q4_K, "q4_k", DType::Q4_K, 15},     {WeightQuant::Q6_K, "q6_k", DType::Q6_K, 18},
};

const LevelInfo& info(WeightQuant level) {
  for (const LevelInfo& l : kLevels) {
    if (l.level == level) return l;
  }
  throw std::invalid_argument("unknown weight quantization level " + std::to_string(static_cast<int>(level)));
}

// The policy's format before any fallback.
DType wanted_format(WeightQuant level, DType base, const MatrixPlace& place) {
  const bool below_8_bits = level == WeightQuant::Q4 || level == WeightQuant::Q4_1 || level == WeightQuant::Q4_K ||
                            level == WeightQuant::Q6_K;
  if (below_8_bits && (place.kind == MatrixKind::OutputHead || place.kind == MatrixKind::Embedding)) return DType::Q6_K;
  if (level != WeightQuant::Q4_K) return base;
  switch (place.kind) {
    case MatrixKind::AttnV:
    case MatrixKind::FfnDown: return uses_more_bits(place.layer, place.n_layers) ? DType::Q6_K : base;
    case MatrixKind::AttnQkv: return DType::Q5_K;
    default: return base;
  }
}

// llama.cpp's format for rows that are not whole blocks of a 256-element K-quant.
DType block_fallback(DType wanted) {
  switch (wanted) {
    case DType::Q4_K: return DType::Q5_0;
    case DType::Q5_K: return DType::Q5_1;
    case DType::Q6_K: return DType::Q8_0;
    default: return DType::F16;
  }
}

bool whole_blocks(DType type, int64_t cols) { return cols % dtype_info(type).block_size == 0; }

}  // namespace

std::string_view weight_quant_name(WeightQuant level) { return info(level).name; }

std::optional<WeightQuant> weight_quant_from_name(std::string_view name) {
  for (const LevelInfo& l : kLevels) {
    if (l.name == name) return l.level;
  }
  return std::nullopt;
}

std::vector<std::string> weight_quant_name_list() {
  std::vector<std::string> names;
  for (const LevelInfo& l : kLevels) names.emplace_back(l.name);
  return names;
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

MatrixPlace matrix_place(std::string_view name, int32_t n_layers, bool tied) {
  MatrixPlace place;
  place.n_layers = n_layers;
  if (name == "output.weight") {
    place.kind = MatrixKind::OutputHead;
  } else if (name == "token_embd.weight") {
    place.kind = tied ? MatrixKind::OutputHead : MatrixKind::Embedding;
  } else if (name.starts_with("blk.")) {
    // blk.N.<what>.weight
    const std::string_view rest = name.substr(4);
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), place.layer);
    const std::string_view what = ec == std::errc() && end < rest.data() + rest.size() && *end == '.'
                                      ? rest.substr(static_cast<size_t>(end - rest.data()) + 1)
                                      : std::string_view();
    if (what == "attn_v.weight") place.kind = MatrixKind::AttnV;
    if (what == "attn_qkv.weight") place.kind = MatrixKind::AttnQkv;
    if (what == "ffn_down.weight") place.kind = MatrixKind::FfnDown;
  }
  return place;
}

bool uses_more_bits(int32_t layer, int32_t n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

MatrixFormat matrix_format(WeightQuant level, DType source, int64_t cols, const MatrixPlace& place) {
  const std::optional<DType> base = info(level).type;
  if (!base) return MatrixFormat{source, source};
  MatrixFormat f;
  f.wanted = wanted_format(level, *base, place);
  f.stored = f.wanted;
  if (!whole_blocks(f.stored, cols)) f.stored = block_fallback(f.wanted);
  if (!whole_blocks(f.stored, cols)) f.stored = DType::F16;
  return f;
}

uint32_t llama_file_type(WeightQuant level) {
  if (level == WeightQuant::Native) throw std::invalid_argument("the native level keeps the file as it is");
  return info(level).file_type;
}

}  // namespace inferscope
