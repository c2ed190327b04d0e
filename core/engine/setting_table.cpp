#include "core/engine/setting_table.h"

#include <algorithm>
#include <cstdlib>

#include "core/common/text_format.h"

namespace inferscope {
namespace {

// Whether `value` is the setting's lowest, which stands for lowest_means.
bool at_lowest(const EngineSetting& s, const std::string& value) {
  if (s.lowest_means.empty()) return false;
  if (value == s.lowest_means) return true;
  if (s.kind == SettingKind::Integer) return value == std::to_string(static_cast<int64_t>(s.min));
  return s.kind == SettingKind::Real && std::strtod(value.c_str(), nullptr) == s.min;
}

}  // namespace

const std::vector<EngineSetting>& engine_settings() {
  static const std::vector<EngineSetting> rows = engine_config_settings();
  return rows;
}

const EngineSetting* find_setting(std::string_view key) {
  for (const EngineSetting& s : engine_settings()) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

std::vector<const EngineSetting*> changed_settings(const EngineConfig& a, const EngineConfig& b, bool both_apply) {
  std::vector<const EngineSetting*> changed;
  for (const EngineSetting& s : engine_settings()) {
    if (both_apply && !(s.applies_to(a) && s.applies_to(b))) continue;
    if (s.get(a) != s.get(b)) changed.push_back(&s);
  }
  return changed;
}

std::string setting_text(const EngineSetting& s, const EngineConfig& c) {
  const std::string value = s.get(c);
  return s.name + " " + (at_lowest(s, value) ? s.lowest_means : value + s.unit);
}

std::string config_summary(const EngineConfig& c) {
  std::vector<std::string> parts;
  for (const EngineSetting& s : engine_settings()) {
    if (!s.summary) continue;
    if (std::string words = s.summary(c); !words.empty()) parts.push_back(std::move(words));
  }
  return join(parts, " · ");
}

std::string build_setting_names() {
  std::vector<std::string> names;
  for (const EngineSetting& s : engine_settings()) {
    if (s.timing == SettingTiming::Build) names.push_back(s.name);
  }
  const std::string last = names.back();
  names.pop_back();
  return join(names) + " and " + last;
}

}  // namespace inferscope
