// The device a forward pass runs on failed (a CUDA call returned an error): the engine ends the
// step's requests. When the device is lost (a sticky error: every later call would fail too) the
// engine moves to the CPU; when only the step failed (out of memory, a launch the device refused) it
// stays on the device, unless steps keep failing so. Bad input (a token id, a batch) is never one.
#pragma once
#include <stdexcept>
#include <string>

namespace inferscope {

class DeviceFailure : public std::runtime_error {
 public:
  explicit DeviceFailure(const std::string& what, bool device_lost = true)
      : std::runtime_error(what), device_lost_(device_lost) {}
  bool device_lost() const { return device_lost_; }

 private:
  bool device_lost_;
};

}  // namespace inferscope
