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

// A count with its thousands grouped: "1,210".
inline std::string format_thousands(long long n) {
  const std::string digits = std::to_string(n);
  const size_t first = digits[0] == '-' ? 1 : 0;
  std::string out = digits.substr(0, first);
  // A comma before every digit that has a multiple of three digits after it.
  for (size_t i = first; i < digits.size(); ++i) {
    if (i > first && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
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
