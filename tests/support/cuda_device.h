// Tests that need a CUDA device: INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE() skips the calling test, with
// the reason printed, when there is none (no driver, no device, or CUDA reports an error).
#pragma once
#include <cuda_runtime.h>

#include <string>

namespace inferscope {

// Empty when a CUDA device is usable, else why not.
inline std::string cuda_device_missing_reason() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) return std::string("no CUDA device: cudaGetDeviceCount says ") + cudaGetErrorString(error);
  if (count == 0) return "no CUDA device: cudaGetDeviceCount found 0 devices";
  return {};
}

}  // namespace inferscope

#define INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE()                                       \
  do {                                                                              \
    if (const std::string reason = ::inferscope::cuda_device_missing_reason(); !reason.empty()) \
      GTEST_SKIP() << reason;                                                       \
  } while (0)
