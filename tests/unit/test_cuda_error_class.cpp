// Which CUDA and cuBLAS errors leave the device usable (the engine stays on it) and which lose it
// (the engine moves to the CPU): a pure function of the error code, checked without a device.
#include <gtest/gtest.h>

#include "kernels/cuda/cuda_check.h"

namespace inferscope::gpu {
namespace {

TEST(CudaErrorClass, OutOfMemoryAndARefusedLaunchLeaveTheContext) {
  for (cudaError_t e : {cudaErrorMemoryAllocation, cudaErrorInvalidConfiguration, cudaErrorLaunchOutOfResources}) {
    EXPECT_TRUE(cuda_error_leaves_context(e)) << cudaGetErrorName(e);
  }
  EXPECT_TRUE(cublas_error_leaves_context(CUBLAS_STATUS_ALLOC_FAILED));
}

TEST(CudaErrorClass, StickyAndUnknownErrorsLoseTheDevice) {
  for (cudaError_t e : {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorMisalignedAddress,
                        cudaErrorIllegalInstruction, cudaErrorHardwareStackError, cudaErrorECCUncorrectable,
                        cudaErrorAssert, cudaErrorLaunchTimeout, cudaErrorUnknown, cudaErrorNoDevice}) {
    EXPECT_FALSE(cuda_error_leaves_context(e)) << cudaGetErrorName(e);
  }
  EXPECT_FALSE(cublas_error_leaves_context(CUBLAS_STATUS_EXECUTION_FAILED));
  EXPECT_FALSE(cublas_error_leaves_context(CUBLAS_STATUS_INTERNAL_ERROR));
}

TEST(CudaErrorClass, TheCheckKeepsTheCodeForTheClass) {
  try {
    cuda_check(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "here.cpp", 1);
    FAIL() << "cuda_check did not throw";
  } catch (const CudaError& e) {
    EXPECT_TRUE(cuda_error_leaves_context(e.code()));
    EXPECT_NE(std::string(e.what()).find("cudaErrorMemoryAllocation"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace inferscope::gpu
