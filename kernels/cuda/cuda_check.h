// Every CUDA runtime call, kernel launch and cuBLAS call goes through a check that throws (CudaError,
// CublasError) naming the call and the library's message.
#pragma once
#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace inferscope::gpu {

// A failed call of a CUDA library: the library's status code, and a message naming the call.
template <typename Status>
class LibraryError : public std::runtime_error {
 public:
  LibraryError(Status code, const std::string& what) : std::runtime_error(what), code_(code) {}
  Status code() const { return code_; }

 private:
  Status code_;
};

using CudaError = LibraryError<cudaError_t>;
using CublasError = LibraryError<cublasStatus_t>;

// Throws CudaError("CALL failed at FILE:LINE: NAME (message)") unless status is cudaSuccess.
void cuda_check(cudaError_t status, const char* call, const char* file, int line);

// Throws CublasError("CALL failed at FILE:LINE: cublasGetStatusString's text") unless status is
// CUBLAS_STATUS_SUCCESS.
void cublas_check(cublasStatus_t status, const char* call, const char* file, int line);

// Whether a failed call leaves the device's context usable: only out of memory and a launch the device
// refused (its configuration, or too few registers or too little shared memory for it) fail the call
// alone. Every other error is taken as sticky (an illegal address, a launch failure, a hardware
// fault: every later call fails too), and so is any error this list does not name.
bool cuda_error_leaves_context(cudaError_t status);
// The same for cuBLAS: only its failure to allocate its workspace.
bool cublas_error_leaves_context(cublasStatus_t status);

// Why no CUDA device can run a kernel here ("no CUDA device: cudaGetDeviceCount failed with ..." or
// "... found none"), or "" when one can. Asked of the runtime once per process.
const std::string& device_unavailable_reason();

}  // namespace inferscope::gpu

// INFERSCOPE_CUDA_CHECK(cudaMalloc(&p, n)): the call, checked.
#define INFERSCOPE_CUDA_CHECK(call) ::inferscope::gpu::cuda_check((call), #call, __FILE__, __LINE__)
// After a kernel<<<...>>> launch: the launch error (bad configuration, no device), named by `what`.
#define INFERSCOPE_CUDA_CHECK_LAUNCH(what) ::inferscope::gpu::cuda_check(cudaGetLastError(), what, __FILE__, __LINE__)
// INFERSCOPE_CUBLAS_CHECK(cublasCreate(&handle)): the cuBLAS call, checked.
#define INFERSCOPE_CUBLAS_CHECK(call) ::inferscope::gpu::cublas_check((call), #call, __FILE__, __LINE__)
