// Numbers and lists as text for messages, tables and config notes: printf formats, locale-free.
#pragma once
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace inferscope {

// `v` through a printf format with one double conversion ("%.3f" by default).
inline std::string format_number(double v, const char* format = "%.3f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// `v` with `decimals` digits after the point ("%.*f").
inline std::string format_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Bytes as "12.3 MiB".
inline std::string format_mib(size_t bytes) {
  return format_number(static_cast<double>(bytes) / (1 << 20), "%.1f MiB");
}

// "a, b, c".
inline std::string join(const std::vector<std::string>& parts, const std::string& separator = ", ") {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : separator) + p;
  return out;
}

}  // namespace inferscope
