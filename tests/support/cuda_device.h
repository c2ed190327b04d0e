// For the CUDA tests: skip (with the reason printed) where no CUDA device can run them, and device
// buffers that free themselves.
#pragma once
#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.h"

namespace inferscope::test {

// Why no CUDA device can run a kernel here, or "" when one can (asked once per process).
inline const std::string& cuda_unavailable_reason() {
  static const std::string reason = [] {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess)
      return std::string("no CUDA device: cudaGetDeviceCount failed with ") + cudaGetErrorName(status) + " (" +
             cudaGetErrorString(status) + ")";
    if (count == 0) return std::string("no CUDA device: cudaGetDeviceCount found none");
    return std::string();
  }();
  return reason;
}

// In a TEST body: skips the test when no CUDA device is usable, naming why.
#define INFERSCOPE_SKIP_WITHOUT_CUDA_DEVICE()                                           \
  do {                                                                                  \
    if (!::inferscope::test::cuda_unavailable_reason().empty())                         \
      GTEST_SKIP() << ::inferscope::test::cuda_unavailable_reason();                    \
  } while (0)

// n elements of T in device memory.
template <typename T>
class DeviceBuffer {
 public:
  // At least one element: cudaMalloc of 0 bytes gives no pointer to pass around.
  explicit DeviceBuffer(size_t n) : n_(n) {
    INFERSCOPE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), std::max<size_t>(n, 1) * sizeof(T)));
  }
  explicit DeviceBuffer(std::span<const T> host) : DeviceBuffer(host.size()) {
    INFERSCOPE_CUDA_CHECK(cudaMemcpy(data_, host.data(), host.size_bytes(), cudaMemcpyHostToDevice));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data_); }

  T* get() const { return data_; }
  void upload(const std::vector<T>& host) {
    INFERSCOPE_CUDA_CHECK(cudaMemcpy(data_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    INFERSCOPE_CUDA_CHECK(cudaMemcpy(host.data(), data_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  T* data_ = nullptr;
  size_t n_;
};

}  // namespace inferscope::test
