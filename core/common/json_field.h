// Reading JSON text, and one field of a JSON object, with errors that name where it was (file, step, field).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace inferscope {

// `text` as JSON; throws Error "WHERE: not valid JSON: ..." (nlohmann's message names the byte).
template <typename Error = std::runtime_error>
nlohmann::json parse_json_text(std::string_view text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number beyond double
    throw Error(where + ": not valid JSON: " + e.what());
  }
}

// Whether T is a std::vector (json_fits checks each element).
template <typename T>
inline constexpr bool is_vector_v = false;
template <typename E, typename A>
inline constexpr bool is_vector_v<std::vector<E, A>> = true;

// Whether v.get<T>() gives v's value. nlohmann casts any number to an integer type or a float, so
// 5.5 or 1e300 would read as some other int32_t, or undefined behaviour, and 1e300 as a float's
// infinity: an integer type takes only whole numbers in its range, a float only numbers in its range,
// a vector only elements that fit. Other values are left to get<T>, which refuses another kind itself.
template <typename T>
bool json_fits(const nlohmann::json& v) {
  if constexpr (is_vector_v<T>) {
    return !v.is_array() || std::all_of(v.begin(), v.end(), [](const nlohmann::json& e) { return json_fits<typename T::value_type>(e); });
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (v.is_number_unsigned()) return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    if (v.is_number_integer()) {
      const int64_t x = v.get<int64_t>();
      return x < 0 ? std::is_signed_v<T> && x >= static_cast<int64_t>(std::numeric_limits<T>::min())
                   : static_cast<uint64_t>(x) <= static_cast<uint64_t>(std::numeric_limits<T>::max());
    }
    if (!v.is_number_float()) return true;
    const double d = v.get<double>();
    return d == std::trunc(d) && d >= static_cast<double>(std::numeric_limits<T>::min()) &&
           d < std::ldexp(1.0, std::numeric_limits<T>::digits);  // 2^digits: the largest value + 1, exactly
  } else if constexpr (std::is_same_v<T, float>) {
    return !v.is_number() || std::abs(v.get<double>()) <= std::numeric_limits<float>::max();
  }
  return true;
}

// j[key] as T; throws std::runtime_error "WHERE: field 'KEY' is missing or has the wrong type: VALUE"
// (a number out of T's range, or a fraction for an integer type, is of the wrong type: json_fits).
template <typename T>
T json_field(const nlohmann::json& j, const char* key, const std::string& where) {
  try {
    if (const nlohmann::json& v = j.at(key); json_fits<T>(v)) return v.get<T>();
  } catch (const nlohmann::json::exception&) {
  }
  throw std::runtime_error(where + ": field '" + key + "' is missing or has the wrong type" +
                           (j.is_object() && j.contains(key) ? ": " + j.at(key).dump() : std::string()));
}

}  // namespace inferscope
