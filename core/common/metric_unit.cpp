#include "core/common/metric_unit.h"

#include <cmath>
#include <cstdio>

namespace inferscope {
namespace {

std::string fixed(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

// Fewer digits for larger numbers: 3 significant figures without scientific notation.
std::string three_figures(double v) {
  const double a = std::fabs(v);
  return fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

}  // namespace

std::pair<double, const char*> binary_scaled(double bytes) {
  static const char* const kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  while (std::fabs(bytes) >= 1024 && i < 4) bytes /= 1024, ++i;
  return {bytes, kNames[i]};
}

std::pair<double, const char*> si_scaled(double v) {
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 5) v /= 1000, ++i;
  return {v, kPrefixes[i]};
}

const char* metric_unit_name(MetricUnit unit) {
  switch (unit) {
    case MetricUnit::Count: return "count";
    case MetricUnit::Tokens: return "tokens";
    case MetricUnit::Seconds: return "s";
    case MetricUnit::Fraction: return "fraction";
    case MetricUnit::Bytes: return "bytes";
    case MetricUnit::BytesPerSecond: return "B/s";
    case MetricUnit::TokensPerSecond: return "tok/s";
    case MetricUnit::PerSecond: return "/s";
    case MetricUnit::Flops: return "FLOP";
    case MetricUnit::FlopsPerSecond: return "FLOP/s";
    case MetricUnit::FlopsPerByte: return "FLOP/B";
  }
  return "count";
}

bool whole_unit(MetricUnit unit) {
  return unit == MetricUnit::Count || unit == MetricUnit::Tokens || unit == MetricUnit::Bytes;
}

std::string format_metric(double value, MetricUnit unit) {
  if (!std::isfinite(value)) return "-";
  switch (unit) {
    case MetricUnit::Seconds:
      if (std::fabs(value) < 1e-3 && value != 0) return three_figures(value * 1e6) + " µs";
      if (std::fabs(value) < 1) return three_figures(value * 1e3) + " ms";
      return three_figures(value) + " s";
    case MetricUnit::Fraction:
      return fixed(value * 100, 1) + " %";
    case MetricUnit::Bytes: {
      const auto [v, name] = binary_scaled(value);
      return (std::fabs(value) < 1024 ? fixed(v, 0) : three_figures(v)) + " " + name;
    }
    case MetricUnit::BytesPerSecond: {
      const auto [v, prefix] = si_scaled(value);
      return three_figures(v) + " " + prefix + "B/s";
    }
    case MetricUnit::TokensPerSecond:
      return three_figures(value) + " tok/s";
    case MetricUnit::PerSecond:
      return three_figures(value) + " /s";
    case MetricUnit::Flops: {
      const auto [v, prefix] = si_scaled(value);
      return three_figures(v) + " " + prefix + "FLOP";
    }
    case MetricUnit::FlopsPerSecond:
      return format_metric(value, MetricUnit::Flops) + "/s";
    case MetricUnit::FlopsPerByte:
      return three_figures(value) + " FLOP/B";
    case MetricUnit::Count:
    case MetricUnit::Tokens:
      break;
  }
  return value == std::round(value) ? std::to_string(static_cast<long long>(value)) : three_figures(value);
}

}  // namespace inferscope
