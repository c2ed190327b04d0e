#include "core/common/setting_row.h"

#include <charconv>

namespace inferscope {

int64_t parse_setting_integer(const std::string& text, int64_t lo, int64_t hi, const std::string& lowest_means) {
  if (!lowest_means.empty() && text == lowest_means) return lo;
  int64_t v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) throw SettingError("is not an integer");
  if (v < lo || v > hi) throw SettingError("is out of range (" + std::to_string(lo) + ".." + std::to_string(hi) + ")");
  return v;
}

float parse_setting_real(const std::string& text, double lo, double hi) {
  float v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) throw SettingError("is not a number");
  if (v < lo || v > hi) throw SettingError("is out of range (" + format_number(lo) + ".." + format_number(hi) + ")");
  return v;
}

std::string setting_real_text(float value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, end);
}

}  // namespace inferscope
