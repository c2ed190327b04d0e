// For the CUDA tests: skip (with the reason printed) where no CUDA device can run them, and device
// buffers that free themselves.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_buffer.h"

namespace inferscope::test {

// Whether the run must test on a GPU (INFERSCOPE_REQUIRE_CUDA=1, as scripts/gpu-check.sh sets): then
// a test that finds no usable device fails instead of skipping.
inline bool cuda_required() {
  const char* v = std::getenv("INFERSCOPE_REQUIRE_CUDA");
  return v != nullptr && std::string_view(v) == "1";
}

// In a TEST body: skips the test when no CUDA device is usable, naming why; fails instead, with the
// same reason, where the run requires CUDA.
#define INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE()                                                        \
  do {                                                                                               \
    const std::string no_device_ = ::inferscope::gpu::device_unavailable_reason();                    \
    if (!no_device_.empty() && ::inferscope::test::cuda_required())                                  \
      FAIL() << "INFERSCOPE_REQUIRE_CUDA=1, but no CUDA device can run this test: " << no_device_;   \
    if (!no_device_.empty()) GTEST_SKIP() << no_device_;                                              \
  } while (0)

// The tests' device memory is the library's.
using gpu::DeviceBuffer;

}  // namespace inferscope::test
