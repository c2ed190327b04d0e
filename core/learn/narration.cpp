#include "core/learn/narration.h"

#include <cmath>

#include "core/common/text_format.h"

namespace inferscope {

std::string format_value(double v, const std::string& format) {
  if (!std::isfinite(v)) return std::isnan(v) ? "n/a" : (v > 0 ? "∞" : "-∞");
  if (format.empty()) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return format_number(v, "%.0f");
    return format_number(v, std::fabs(v) >= 100 ? "%.0f" : std::fabs(v) >= 10 ? "%.1f" : std::fabs(v) >= 1 ? "%.2f" : "%.3g");
  }
  if (format == "yes") return v != 0 ? "yes" : "no";
  if (format == "divergence") return v < 0 ? "nowhere (identical)" : "at token " + format_number(v, "%.0f");
  if (format == "%") return format_number(100 * v, "%.1f") + "%";
  if (format == "mib") return format_number(v / (1 << 20), "%.2f") + " MiB";
  if (format == "ms") return format_number(v * 1e3, "%.1f") + " ms";
  if (format == "time") {
    // Seconds in the unit that shows them: µs below a millisecond, ms below a second.
    if (std::fabs(v) < 1e-3) return format_number(v * 1e6, "%.0f") + " µs";
    if (std::fabs(v) < 1) return format_number(v * 1e3, "%.1f") + " ms";
    return format_number(v, "%.2f") + " s";
  }
  if (format == "change") {
    // A ratio of new over old, worded by its own value at the 2 decimals shown.
    const std::string times = format_number(v, "%.2f") + "×";
    if (times == "1.00×") return "stayed the same (1.00×)";
    return (v > 1 ? "rose to " : "fell to ") + times;
  }
  const bool decimals = format.size() >= 3 && format.front() == '.' && format.back() == 'f' &&
                        format.find_first_not_of("0123456789", 1) == format.size() - 1;
  if (!decimals) throw ExpressionError("unknown format '" + format + "' (use .Nf, %, mib, ms, time, change, yes or divergence)");
  return format_number(v, ("%" + format).c_str());
}

std::string fill_narration(const std::string& text, const ValueMap& values) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "{{") == 0 || text.compare(i, 2, "}}") == 0) {
      out += text[i++];
      continue;
    }
    if (text[i] != '{') {
      out += text[i];
      continue;
    }
    const size_t close = text.find('}', i);
    if (close == std::string::npos) throw ExpressionError("narration \"" + text + "\": '{' without '}'");
    const std::string inside = text.substr(i + 1, close - i - 1);
    const size_t colon = inside.rfind(':');
    const std::string expression = colon == std::string::npos ? inside : inside.substr(0, colon);
    const std::string format = colon == std::string::npos ? "" : inside.substr(colon + 1);
    try {
      out += format_value(evaluate(expression, values), format);
    } catch (const ExpressionError& e) {
      throw ExpressionError("narration placeholder {" + inside + "}: " + e.what());
    }
    i = close;
  }
  return out;
}

}  // namespace inferscope
