// Device memory that frees itself (cudaMalloc, checked), grown on demand for per-step scratch.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "kernels/cuda/cuda_check.h"

namespace inferscope {

class DeviceAllocation {
 public:
  DeviceAllocation() = default;
  explicit DeviceAllocation(size_t bytes) { reserve(bytes); }
  DeviceAllocation(DeviceAllocation&& o) noexcept : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceAllocation& operator=(DeviceAllocation&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
  ~DeviceAllocation() { cudaFree(data_); }

  // At least `bytes` (contents lost when it grows; never shrinks). True when it grew, and so moved.
  bool reserve(size_t bytes) {
    if (bytes <= bytes_) return false;
    cudaFree(data_);
    data_ = nullptr;
    bytes_ = 0;
    INFERSCOPE_CUDA_CHECK(cudaMalloc(&data_, bytes));
    bytes_ = bytes;
    return true;
  }
  template <typename T = void>
  T* get() const { return static_cast<T*>(data_); }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace inferscope
