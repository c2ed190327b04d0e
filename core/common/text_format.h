// Numbers as text for messages, tables and config notes: printf formats, locale-free.
#pragma once
#include <cstddef>
#include <cstdio>
#include <string>

namespace inferscope {

// `v` through a printf format with one double conversion ("%.3f" by default).
inline std::string format_number(double v, const char* format = "%.3f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Bytes as "12.3 MiB".
inline std::string format_mib(size_t bytes) {
  return format_number(static_cast<double>(bytes) / (1 << 20), "%.1f MiB");
}

}  // namespace inferscope
