// The prefill matmul on the tensor cores: Y = X Wᵀ through cuBLAS (cublasGemmEx, f16 inputs, f32
// accumulation and output). The weights are dequantized to f16 (dequantize_f16; F16 weights are read
// where they lie) and the activations rounded to f16 into the caller's scratch, then one GEMM.
//
// Not batch invariant: cuBLAS picks its algorithm (tile shape, split-K) by the problem's shape, so a
// row's output may change with the number of tokens beside it. The forward pass uses it for
// sequences of more than kGemvMaxTokens tokens (prefill chunks) and keeps the batch-invariant gemv
// for decode and speculative verification.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/cublas_handle.h"
#include "kernels/cuda/ops.h"

namespace inferscope::gpu {

// Scratch bytes gemm needs for `w` and n_tok tokens: the f16 weights (none for F16) and activations.
size_t gemm_scratch_bytes(const DeviceMatrix& w, int64_t n_tok);

// Y[t][r] = sum_c W[r][c] * X[t][c] for n_tok >= 1 rows of X (w.cols floats each) into n_tok rows of
// Y (w.rows floats), on `stream`. scratch: at least gemm_scratch_bytes(w, n_tok) bytes of device
// memory, overwritten. Throws std::invalid_argument for a type CUDA does not read or too small a
// scratch, CublasError / CudaError when cuBLAS or CUDA fails.
void gemm(const CublasHandle& handle, const DeviceMatrix& w, const float* x, int64_t n_tok, float* y, void* scratch,
          size_t scratch_bytes, cudaStream_t stream);

}  // namespace inferscope::gpu
