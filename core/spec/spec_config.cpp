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

std::vector<SettingRow<SpecConfig>> spec_settings() {
  using Row = SettingRow<SpecConfig>;
  const std::string section = "Speculative decoding";
  const auto speculating = [](const SpecConfig& c) { return c.enabled(); };
  const auto mode_is = [](SpecMode mode) { return [mode](const SpecConfig& c) { return c.mode == mode; }; };
  const auto model_draft = [](const SpecConfig& c) {
    return c.mode == SpecMode::Draft || c.mode == SpecMode::SelfQuant || c.mode == SpecMode::EarlyExit;
  };
  std::vector<std::string> modes;
  for (const SpecModeInfo& m : kSpecModes) modes.emplace_back(m.name);
  return {
      Row::choice({.key = "spec", .flag = "--spec", .help = "speculative decoding (default none): " + spec_mode_help(),
                   .switch_cost = kSwitchNewProposer, .section = section, .label = "speculation",
                   .name = "speculation",
                   .explanation = "A cheap proposer drafts tokens and the target checks them all in one pass: "
                                  "greedy output stays token for token the same, only faster when drafts are "
                                  "accepted.",
                   .summary = [](const SpecConfig& c) { return c.enabled() ? describe_spec(c) : std::string(); }},
                  modes, [](const SpecConfig& c) { return std::string(spec_mode_name(c.mode)); },
                  [](SpecConfig& c, const std::string& v) { c.mode = *spec_mode_from_name(v); }),
      // "auto" or a number of drafts: a 0 would read as "none" to some, so it is not taken for auto.
      {.key = "spec_k", .flag = "--spec-k",
       .help = "speculation: draft tokens per step, auto (default: chosen per sequence from its acceptance and the "
               "measured step costs, up to 8; none where drafts would not pay) or a fixed 1-16",
       .kind = SettingKind::Integer, .min = SpecConfig::kAutoK, .max = 16, .lowest_means = "auto",
       .switch_cost = kSwitchNewProposer, .section = section, .label = "draft tokens k", .name = "draft tokens",
       .explanation = "Draft tokens per step. auto: each sequence drafts as many as its measured acceptance and the "
                      "measured cost of longer steps say will pay, up to 8, and none where drafts would slow it "
                      "down. 1-16: always up to that many.",
       .get = [](const SpecConfig& c) { return spec_k_name(c.k); },
       .set = [](SpecConfig& c, const std::string& text) {
         c.k = text == "auto" ? SpecConfig::kAutoK : static_cast<int32_t>(parse_setting_integer(text, 1, 16, ""));
       },
       .applies = speculating, .applies_when = "--spec"},
      Row::integer({.key = "ngram_min", .flag = "--ngram-min",
                    .help = "ngram speculation: the shortest match that drafts, 1-16 tokens (default 2)",
                    .switch_cost = kSwitchNewProposer, .section = section, .label = "n-gram min", .name = "n-gram min",
                    .explanation = "The shortest earlier match that drafts.", .applies = mode_is(SpecMode::Ngram),
                    .applies_when = "--spec ngram"},
                   1, 16, [](const SpecConfig& c) { return int64_t{c.ngram_min}; },
                   [](SpecConfig& c, int64_t v) { c.ngram_min = static_cast<int32_t>(v); }),
      Row::integer({.key = "ngram_max", .flag = "--ngram-max",
                    .help = "ngram speculation: the longest match compared, 1-16 tokens (default 8); a draft is no "
                            "longer than its match",
                    .switch_cost = kSwitchNewProposer, .section = section, .label = "n-gram max", .name = "n-gram max",
                    .explanation = "The longest match compared; a draft is no longer than its match.",
                    .applies = mode_is(SpecMode::Ngram), .applies_when = "--spec ngram"},
                   1, 16, [](const SpecConfig& c) { return int64_t{c.ngram_max}; },
                   [](SpecConfig& c, int64_t v) { c.ngram_max = static_cast<int32_t>(v); }),
      {.key = "draft_model", .flag = "--draft-model", .help = "draft speculation: a GGUF with the target's vocabulary",
       .kind = SettingKind::Path, .switch_cost = kSwitchNewProposer, .section = section, .label = "draft model",
       .name = "draft model", .explanation = "A GGUF model with the target's vocabulary drafts.",
       .get = [](const SpecConfig& c) { return c.draft_model; },
       .set = [](SpecConfig& c, const std::string& v) { c.draft_model = v; },
       .applies = mode_is(SpecMode::Draft), .applies_when = "--spec draft"},
      Row::choice({.key = "draft_quant", .flag = "--draft-quant",
                   .help = "self-quant speculation: the draft's level, q4 (default) | q4_1 | q8",
                   .switch_cost = kSwitchNewProposer, .section = section, .label = "draft level", .name = "draft level",
                   .explanation = "The target's own weights at this level draft.",
                   .applies = mode_is(SpecMode::SelfQuant), .applies_when = "--spec self-quant"},
                  {"q4", "q4_1", "q8"}, [](const SpecConfig& c) { return std::string(weight_quant_name(c.draft_quant)); },
                  [](SpecConfig& c, const std::string& v) { c.draft_quant = *weight_quant_from_name(v); }),
      Row::integer({.key = "draft_layers", .flag = "--draft-layers",
                    .help = "early-exit speculation: the target's first L layers draft (1 .. layers-1)",
                    .lowest_means = "not set", .switch_cost = kSwitchNewProposer, .section = section,
                    .label = "draft layers", .name = "draft layers",
                    .explanation = "The target's first layers and its output head draft.",
                    .applies = mode_is(SpecMode::EarlyExit), .applies_when = "--spec early-exit"},
                   // Not capped at the target's layers here: the engine names the valid range when it refuses.
                   0, 1 << 16, [](const SpecConfig& c) { return int64_t{c.draft_layers}; },
                   [](SpecConfig& c, int64_t v) { c.draft_layers = static_cast<int32_t>(v); }),
      Row::real({.key = "draft_p_min", .flag = "--draft-p-min",
                 .help = "model drafts stop when their top probability falls below this, 0-1 (default 0)",
                 .step = 0.05, .lowest_means = "off", .switch_cost = kSwitchNewProposer, .section = section,
                 .label = "draft p-min", .name = "draft p-min",
                 .explanation = "Model drafts stop once their top probability falls below this (off: always k).",
                 .applies = model_draft, .applies_when = "--spec draft, self-quant or early-exit"},
                0.0, 1.0, [](const SpecConfig& c) { return c.draft_p_min; },
                [](SpecConfig& c, float v) { c.draft_p_min = v; }),
  };
}

}  // namespace inferscope
