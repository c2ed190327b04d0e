// The speculative-decoding toggle: which proposer drafts tokens, and how many per step.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/setting_row.h"
#include "core/quant/weight_quant.h"

namespace inferscope {

// none; ngram (prompt lookup); draft (another GGUF with the same vocabulary); self-quant (the
// target's weights at a cheaper level); early-exit (the target's first layers and its output head).
enum class SpecMode { None, Ngram, Draft, SelfQuant, EarlyExit };

// Every mode, in the order the command line and the Config panel list them: the one list of modes.
struct SpecModeInfo {
  SpecMode mode;
  std::string_view name;     // as the command line, the JSON configs and the panel spell it
  std::string_view drafter;  // what drafts the tokens, for help texts
};
inline constexpr std::array<SpecModeInfo, 5> kSpecModes{{
    {SpecMode::None, "none", "no speculation"},
    {SpecMode::Ngram, "ngram", "prompt lookup"},
    {SpecMode::Draft, "draft", "--draft-model"},
    {SpecMode::SelfQuant, "self-quant", "the target at --draft-quant"},
    {SpecMode::EarlyExit, "early-exit", "the target's first --draft-layers layers"},
}};

std::string_view spec_mode_name(SpecMode mode);
std::optional<SpecMode> spec_mode_from_name(std::string_view name);
std::string spec_mode_names();  // "none, ngram, draft, self-quant, early-exit"
// "none (no speculation) | ngram (prompt lookup) | ...": each mode with what drafts.
std::string spec_mode_help();

struct SpecConfig {
  // Drafts per step: kAutoK chooses them per sequence and step from its measured acceptance and
  // step costs (core/spec/draft_length.h), up to kAutoMaxK; a fixed k (1..16) is for experiments.
  static constexpr int32_t kAutoK = 0, kAutoMaxK = 8;

  SpecMode mode = SpecMode::None;
  int32_t k = kAutoK;                // draft tokens per step at most (1..16), or kAutoK
  int32_t ngram_min = 2, ngram_max = 8;  // ngram: the shortest match that drafts, the longest compared (1..16)
  float draft_p_min = 0.0f;          // model drafts stop when their top probability falls below this (0..1)
  std::string draft_model;           // draft: the GGUF file
  WeightQuant draft_quant = WeightQuant::Q4;  // self-quant: the level (q4, q4_1 or q8)
  int32_t draft_layers = 0;          // early-exit: the target's first L layers (1 .. layers - 1)

  bool enabled() const { return mode != SpecMode::None; }
  bool auto_k() const { return k == kAutoK; }
  int32_t max_k() const { return auto_k() ? kAutoMaxK : k; }  // draft slots a decode holds at most
  // The draft keeps a KV cache of its own (a draft model or a self-quant copy).
  bool own_draft_kv() const { return mode == SpecMode::Draft || mode == SpecMode::SelfQuant; }
  bool operator==(const SpecConfig&) const = default;
};

// Throws std::invalid_argument naming the setting and its range (k, n-gram sizes, p-min, a draft
// mode without its model file, a self-quant level that is not q4, q4_1 or q8, draft layers outside
// 1 .. target_layers - 1).
void validate_spec(const SpecConfig& spec, int32_t target_layers);
// One line for config notes: "spec ngram k=auto (n 2..4)".
std::string describe_spec(const SpecConfig& spec);
// "auto" or the number.
std::string spec_k_name(int32_t k);

// The settings above, in the Config panel's order.
std::vector<SettingRow<SpecConfig>> spec_settings();

}  // namespace inferscope
