// A struct's numeric field read and written as a double, through a plain function pointer: what the
// metric tables (step_metrics.h, engine_metrics.h) hold per row, so a row names its field once and
// both the JSON writer and the reader walk it.
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

namespace inferscope {

template <auto Field, class Struct>
double field_value(const Struct& s) {
  return static_cast<double>(s.*Field);
}

// Sets the field to `v`; false, changing nothing, when `v` does not fit it (an integer field takes
// only whole numbers in its range).
template <auto Field, class Struct>
bool set_field(Struct& s, double v) {
  using T = std::remove_reference_t<decltype(s.*Field)>;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // 2^digits is one past the largest value, exactly, as a double.
    if (!(v == std::trunc(v) && v >= static_cast<double>(std::numeric_limits<T>::min()) &&
          v < std::ldexp(1.0, std::numeric_limits<T>::digits))) {
      return false;
    }
  }
  s.*Field = static_cast<T>(v);
  return true;
}

}  // namespace inferscope
