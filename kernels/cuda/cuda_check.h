// CudaError and INFERSCOPE_CUDA_CHECK(call): a failed CUDA runtime call throws, naming the call and
// CUDA's own message.
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace inferscope::cuda {

class CudaError : public std::runtime_error {
 public:
  CudaError(const char* call, cudaError_t error)
      : std::runtime_error(std::string(call) + ": " + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")") {}
};

inline void check(cudaError_t error, const char* call) {
  if (error != cudaSuccess) throw CudaError(call, error);
}

}  // namespace inferscope::cuda

#define INFERSCOPE_CUDA_CHECK(call) ::inferscope::cuda::check((call), #call)
