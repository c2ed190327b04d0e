// Where the forward pass runs: the CPU, or CUDA device N. Fixed when an engine is built.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace inferscope {

struct ComputeDevice {
  bool cuda = false;
  int32_t index = 0;  // the CUDA device (cudaSetDevice's number)

  bool operator==(const ComputeDevice&) const = default;
};

// "cpu", "cuda" (device 0) or "cuda:N"; nullopt for anything else.
std::optional<ComputeDevice> compute_device_from_name(std::string_view name);
// "cpu" or "cuda:N".
std::string compute_device_name(const ComputeDevice& device);

}  // namespace inferscope
