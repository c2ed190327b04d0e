// INFERSCOPE_HD marks a function that runs on both the CPU and the GPU: __host__ __device__ under
// nvcc, nothing for a plain C++ compiler (so CPU tests call the very code the kernels execute).
#pragma once

#ifdef __CUDACC__
#define INFERSCOPE_HD __host__ __device__
#else
#define INFERSCOPE_HD
#endif
