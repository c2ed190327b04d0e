// Reading one field of a JSON object with an error that names where it was (file, step, field).
#pragma once
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace inferscope {

// j[key] as T; throws std::runtime_error "WHERE: field 'KEY' is missing or has the wrong type: VALUE".
template <typename T>
T json_field(const nlohmann::json& j, const char* key, const std::string& where) {
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::runtime_error(where + ": field '" + key + "' is missing or has the wrong type" +
                             (j.is_object() && j.contains(key) ? ": " + j.at(key).dump() : std::string()));
  }
}

}  // namespace inferscope
