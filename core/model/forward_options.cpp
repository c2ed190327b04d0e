#include "core/model/forward_options.h"

#include <string>

namespace inferscope {

std::vector<SettingRow<ForwardOptions>> forward_option_settings() {
  using Row = SettingRow<ForwardOptions>;
  const std::string section = "Compute";
  return {
      Row::on_off({.key = "fuse", .flag = "--fuse",
                   .help = "operator fusion: on (default: Q/K/V and gate/up as one dispatch each) | off (one per "
                           "product)",
                   .timing = SettingTiming::Build, .switch_cost = kSwitchNewEngine, .section = section,
                   .label = "operator fusion", .name = "operator fusion",
                   .explanation = "On: Q, K and V (and gate and up) run as one thread-pool dispatch each; off: one "
                                  "per product. Same output bit for bit.",
                   .switch_text = "fuse Q/K/V and gate/up",
                   .summary = [](const ForwardOptions& o) { return std::string(o.matmul.fuse ? "" : "unfused"); }},
                  [](const ForwardOptions& o) { return o.matmul.fuse; },
                  [](ForwardOptions& o, bool v) { o.matmul.fuse = v; }),
      Row::choice({.key = "activations", .flag = "--activations",
                   .help = "how activations meet quantized weights: f32 (default, exact) | q8 (int8, as llama.cpp)",
                   .timing = SettingTiming::Build, .switch_cost = kSwitchNewEngine, .section = section,
                   .label = "activations", .name = "activations",
                   .explanation = "f32: quantized weights meet exact activations; q8: activations are rounded to "
                                  "int8 blocks, as llama.cpp does (faster, may change the text)."},
                  {"f32", "q8"},
                  [](const ForwardOptions& o) {
                    return std::string(o.matmul.activations == ActivationPrecision::Q8 ? "q8" : "f32");
                  },
                  [](ForwardOptions& o, const std::string& v) {
                    o.matmul.activations = v == "q8" ? ActivationPrecision::Q8 : ActivationPrecision::F32;
                  }),
  };
}

}  // namespace inferscope
