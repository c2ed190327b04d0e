#include "core/spec/spec_config.h"

#include <array>
#include <stdexcept>
#include <utility>

namespace inferscope {
namespace {

void check_range(const char* what, int32_t value, int32_t lo, int32_t hi) {
  if (value < lo || value > hi) {
    throw std::invalid_argument(std::string(what) + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) +
                                ", got " + std::to_string(value));
  }
}

}  // namespace

std::string_view spec_mode_name(SpecMode mode) {
  for (const SpecModeInfo& m : kSpecModes) {
    if (m.mode == mode) return m.name;
  }
  return "unknown";
}

std::optional<SpecMode> spec_mode_from_name(std::string_view name) {
  for (const SpecModeInfo& m : kSpecModes) {
    if (m.name == name) return m.mode;
  }
  return std::nullopt;
}

std::string spec_mode_names() {
  std::string s;
  for (const SpecModeInfo& m : kSpecModes) s += (s.empty() ? "" : ", ") + std::string(m.name);
  return s;
}

std::string spec_mode_help() {
  std::string s;
  for (const SpecModeInfo& m : kSpecModes) {
    s += (s.empty() ? "" : " | ") + std::string(m.name) + " (" + std::string(m.drafter) + ")";
  }
  return s;
}

void validate_spec(const SpecConfig& spec, int32_t target_layers) {
  if (!spec.enabled()) return;
  if (!spec.auto_k() && (spec.k < 1 || spec.k > 16)) {
    throw std::invalid_argument("spec k must be auto or in 1..16, got " + std::to_string(spec.k));
  }
  if (spec.mode == SpecMode::Ngram) {
    check_range("ngram-min", spec.ngram_min, 1, 16);
    check_range("ngram-max", spec.ngram_max, 1, 16);
    if (spec.ngram_min > spec.ngram_max) {
      throw std::invalid_argument("ngram-min " + std::to_string(spec.ngram_min) + " is above ngram-max " +
                                  std::to_string(spec.ngram_max));
    }
  }
  if (!(spec.draft_p_min >= 0.0f && spec.draft_p_min <= 1.0f)) {
    throw std::invalid_argument("draft-p-min must be in 0..1, got " + std::to_string(spec.draft_p_min));
  }
  if (spec.mode == SpecMode::Draft && spec.draft_model.empty()) {
    throw std::invalid_argument("spec draft needs a draft model file (--draft-model PATH)");
  }
  if (spec.mode == SpecMode::SelfQuant && spec.draft_quant != WeightQuant::Q4 &&
      spec.draft_quant != WeightQuant::Q4_1 && spec.draft_quant != WeightQuant::Q8) {
    throw std::invalid_argument("self-quant draft level must be q4, q4_1 or q8, got " +
                                std::string(weight_quant_name(spec.draft_quant)));
  }
  if (spec.mode == SpecMode::EarlyExit) {
    if (target_layers < 2) {
      throw std::invalid_argument("early-exit drafts need a target with at least 2 layers; this one has " +
                                  std::to_string(target_layers));
    }
    check_range("draft-layers", spec.draft_layers, 1, target_layers - 1);
  }
}

std::string describe_spec(const SpecConfig& spec) {
  std::string s = "spec " + std::string(spec_mode_name(spec.mode));
  if (!spec.enabled()) return s;
  s += " k=" + spec_k_name(spec.k);
  switch (spec.mode) {
    case SpecMode::Ngram: s += " (n " + std::to_string(spec.ngram_min) + ".." + std::to_string(spec.ngram_max) + ")"; break;
    case SpecMode::Draft: s += " (" + spec.draft_model + ")"; break;
    case SpecMode::SelfQuant: s += " (" + std::string(weight_quant_name(spec.draft_quant)) + ")"; break;
    case SpecMode::EarlyExit:
      s += " (" + std::to_string(spec.draft_layers) + (spec.draft_layers == 1 ? " layer)" : " layers)");
      break;
    case SpecMode::None: break;
  }
  return s;
}

std::string spec_k_name(int32_t k) { return k == SpecConfig::kAutoK ? "auto" : std::to_string(k); }

}  // namespace inferscope
