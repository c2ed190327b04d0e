#include "gui/compare/config_difference.h"

#include <nlohmann/json.hpp>

#include "core/common/text_format.h"
#include "gui/config/engine_config_text.h"

namespace inferscope::gui {

std::vector<std::string> differing_settings(const EngineConfig& a, const EngineConfig& b) {
  const bool both_paged = a.kv.kind == KvKind::Paged && b.kv.kind == KvKind::Paged;
  const bool speculation = a.spec.enabled() || b.spec.enabled();
  const auto settings_a = engine_config_settings(a), settings_b = engine_config_settings(b);
  std::vector<std::string> differing;
  // Both lists hold the same names in the same order.
  for (size_t i = 0; i < settings_a.size(); ++i) {
    const std::string& name = settings_a[i].first;
    if ((name == "block_size" || name == "prefix_cache") && !both_paged) continue;
    if (name == "spec" && !speculation) continue;
    if (settings_a[i].second != settings_b[i].second) differing.push_back(name);
  }
  return differing;
}

std::string attribution_note(const std::vector<std::string>& differing, bool same_device) {
  if (!same_device) {
    if (differing.empty()) {
      return "A and B run the same configuration on different devices (simulated): differences between the runs are "
             "the devices', not a setting's effect";
    }
    return "A and B differ in " + join(differing) + " and in the device they run on (simulated): differences cannot "
           "be attributed to a setting";
  }
  if (differing.empty()) {
    return "A and B are identical: differences between the runs are run-to-run noise (timing), not a setting's effect";
  }
  if (differing.size() == 1) return "";
  return "A and B differ in " + std::to_string(differing.size()) + " settings (" + join(differing) +
         "): differences cannot be attributed to one of them";
}

}  // namespace inferscope::gui
