// The device a forward pass runs on failed (a CUDA call returned an error): what the engine answers
// by ending the step's requests and moving to the CPU. Bad input (a token id, a batch) is never one.
#pragma once
#include <stdexcept>
#include <string>

namespace inferscope {

class DeviceFailure : public std::runtime_error {
 public:
  explicit DeviceFailure(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace inferscope
