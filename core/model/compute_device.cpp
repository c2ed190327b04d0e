#include "core/model/compute_device.h"

#include <charconv>

namespace inferscope {

std::optional<ComputeDevice> compute_device_from_name(std::string_view name) {
  if (name == "cpu") return ComputeDevice{};
  if (name == "cuda") return ComputeDevice{true, 0};
  constexpr std::string_view prefix = "cuda:";
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return std::nullopt;
  int32_t index = 0;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size();
  const auto [end, error] = std::from_chars(first, last, index);
  if (error != std::errc() || end != last || index < 0) return std::nullopt;
  return ComputeDevice{true, index};
}

std::string compute_device_name(const ComputeDevice& device) {
  return device.cuda ? "cuda:" + std::to_string(device.index) : "cpu";
}

}  // namespace inferscope
