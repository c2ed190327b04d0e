// A cuBLAS handle that destroys itself: created (checked) on the current device, one per owner
// (CudaForward holds one), never shared between threads.
#pragma once
#include <cublas_v2.h>

#include "kernels/cuda/cuda_check.h"

namespace inferscope::gpu {

class CublasHandle {
 public:
  CublasHandle() { INFERSCOPE_CUBLAS_CHECK(cublasCreate(&handle_)); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  ~CublasHandle() { cublasDestroy(handle_); }

  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace inferscope::gpu
