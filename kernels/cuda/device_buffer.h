// Device memory that frees itself: n elements of T, allocated with cudaMalloc (at least one, so a
// zero-sized buffer still has an address to pass around), with checked copies to and from the host.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <vector>

#include "kernels/cuda/cuda_check.h"

namespace inferscope::gpu {

template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n) : n_(n) {
    INFERSCOPE_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), std::max<size_t>(n, 1) * sizeof(T)));
  }
  explicit DeviceBuffer(std::span<const T> host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data_); }

  T* get() const { return data_; }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }
  // Copies host.size() (at most size()) elements to the start of the buffer.
  void upload(std::span<const T> host) {
    INFERSCOPE_CUDA_CHECK(cudaMemcpy(data_, host.data(), std::min(host.size(), n_) * sizeof(T), cudaMemcpyHostToDevice));
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

}  // namespace inferscope::gpu
