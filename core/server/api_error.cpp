#include "core/server/api_error.h"

#include <nlohmann/json.hpp>

namespace inferscope {

nlohmann::json ApiError::json() const {
  const auto or_null = [](const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); };
  return {{"error", {{"message", what()}, {"type", type_}, {"param", or_null(param_)}, {"code", or_null(code_)}}}};
}

}  // namespace inferscope
