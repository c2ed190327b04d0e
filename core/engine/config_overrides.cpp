#include "core/engine/config_overrides.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/engine/setting_table.h"

namespace inferscope {
namespace {

// A JSON value as the setting's text: strings as written, numbers in decimal, booleans as on/off.
std::string text_of(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  if (v.is_number()) return v.dump();
  throw SettingError("is not a value (text, a number or true/false)");
}

// The setting's text as JSON: a switch as true/false, a number as a number, the rest as text.
nlohmann::json json_of(const EngineSetting& s, const std::string& text) {
  if (s.kind == SettingKind::Switch) return text == "on";
  if (s.kind == SettingKind::Real) return std::stod(text);
  const bool whole_number = !text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == std::string::npos;
  if ((s.kind == SettingKind::Integer || s.kind == SettingKind::Choice) && whole_number) return std::stoll(text);
  return text;
}

}  // namespace

EngineConfig apply_config_overrides(EngineConfig c, const nlohmann::json& o, const std::string& where, const PathResolver& resolve) {
  if (!o.is_object()) throw std::runtime_error(where + ": 'config' must be an object");
  const std::string w = where + ": config";
  for (const auto& [key, value] : o.items()) {
    const EngineSetting* s = find_setting(key);
    if (!s) throw std::runtime_error(w + ": unknown toggle '" + key + "'");
    try {
      std::string text = text_of(value);
      if (s->kind == SettingKind::Path && resolve && !text.empty()) text = resolve(text);
      s->set(c, text);
    } catch (const SettingError& e) {
      throw std::runtime_error(w + ": '" + key + "': " + value.dump() + " " + e.what());
    }
  }
  return c;
}

nlohmann::json config_overrides_of(const EngineConfig& c) {
  nlohmann::json j = nlohmann::json::object();
  for (const EngineSetting& s : engine_settings()) j[s.key] = json_of(s, s.get(c));
  return j;
}

}  // namespace inferscope
