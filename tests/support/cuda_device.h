// For the CUDA tests: skip (with the reason printed) where no CUDA device can run them, and device
// buffers that free themselves.
#pragma once
#include <gtest/gtest.h>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_buffer.h"

namespace inferscope::test {

// In a TEST body: skips the test when no CUDA device is usable, naming why.
#define INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE()                                           \
  do {                                                                                  \
    if (!::inferscope::gpu::device_unavailable_reason().empty())                         \
      GTEST_SKIP() << ::inferscope::gpu::device_unavailable_reason();                    \
  } while (0)

// The tests' device memory is the library's.
using gpu::DeviceBuffer;

}  // namespace inferscope::test
