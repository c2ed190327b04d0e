// Memory a forward pass holds on its device (a GPU), in bytes: what the engine's snapshot reports.
#pragma once
#include <cstddef>

namespace inferscope {

struct DeviceMemory {
  size_t weights = 0;
  size_t kv = 0;       // K/V on the device (a mirror of the engine's cache)
  size_t scratch = 0;  // activations, attention scratch, per-step tables

  bool operator==(const DeviceMemory&) const = default;
};

}  // namespace inferscope
