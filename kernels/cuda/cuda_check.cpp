#include "kernels/cuda/cuda_check.h"

namespace inferscope::gpu {

void cuda_check(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw CudaError(status, std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                              cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
}

void cublas_check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw CublasError(status, std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                                cublasGetStatusString(status));
}

bool cuda_error_leaves_context(cudaError_t status) {
  switch (status) {
    case cudaErrorMemoryAllocation:
    case cudaErrorInvalidConfiguration:
    case cudaErrorLaunchOutOfResources:
      return true;
    default:
      return false;
  }
}

bool cublas_error_leaves_context(cublasStatus_t status) { return status == CUBLAS_STATUS_ALLOC_FAILED; }

const std::string& device_unavailable_reason() {
  static const std::string reason = [] {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      return std::string("no CUDA device: cudaGetDeviceCount failed with ") + cudaGetErrorName(status) + " (" +
             cudaGetErrorString(status) + ")";
    }
    if (count == 0) return std::string("no CUDA device: cudaGetDeviceCount found none");
    return std::string();
  }();
  return reason;
}

}  // namespace inferscope::gpu
