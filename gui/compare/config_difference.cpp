#include "gui/compare/config_difference.h"

#include "core/common/text_format.h"
#include "core/engine/setting_table.h"

namespace inferscope::gui {

std::vector<std::string> differing_settings(const EngineConfig& a, const EngineConfig& b) {
  std::vector<std::string> differing;
  for (const EngineSetting* s : changed_settings(a, b, true)) {
    // The device a side runs on is compared apart (attribution_note's same_device).
    if (s->kind != SettingKind::Device) differing.push_back(s->name);
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
