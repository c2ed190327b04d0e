// Every CUDA runtime call and kernel launch goes through a check that throws CudaError naming the call
// and CUDA's message.
#pragma once
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace inferscope::gpu {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// Throws CudaError("CALL failed at FILE:LINE: NAME (message)") unless status is cudaSuccess.
void cuda_check(cudaError_t status, const char* call, const char* file, int line);

// Why no CUDA device can run a kernel here ("no CUDA device: cudaGetDeviceCount failed with ..." or
// "... found none"), or "" when one can. Asked of the runtime once per process.
const std::string& device_unavailable_reason();

}  // namespace inferscope::gpu

// INFERSCOPE_CUDA_CHECK(cudaMalloc(&p, n)): the call, checked.
#define INFERSCOPE_CUDA_CHECK(call) ::inferscope::gpu::cuda_check((call), #call, __FILE__, __LINE__)
// After a kernel<<<...>>> launch: the launch error (bad configuration, no device), named by `what`.
#define INFERSCOPE_CUDA_CHECK_LAUNCH(what) ::inferscope::gpu::cuda_check(cudaGetLastError(), what, __FILE__, __LINE__)
