// INFERSCOPE_HD marks the element maths that both the CUDA kernels and plain C++ (the CPU tests) call:
// __host__ __device__ under nvcc, nothing under a host-only compiler.
#pragma once
#include <bit>
#include <cstdint>

#ifdef __CUDACC__
#define INFERSCOPE_HD __host__ __device__
#else
#define INFERSCOPE_HD
#endif

namespace inferscope::gpu {

// The f32 whose IEEE bits are u.
INFERSCOPE_HD inline float float_from_bits(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  return std::bit_cast<float>(u);
#endif
}

}  // namespace inferscope::gpu
