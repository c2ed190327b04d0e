// Internal to kernels/cpu: dot products of a stored weight row with an activation row, per weight
// type, in a scalar and an AVX2 family. matmul() picks one family and calls it per output.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/format/dtype.h"
#include "kernels/cpu/matmul/matmul.h"

namespace inferscope::cpu {

// sum over n elements of w[i] * a[i]; w is in the weight type, a in the kernel's activation type.
using VecDotFn = float (*)(const void* w, const void* a, int64_t n);

// out[t * out_stride + r] = dot(weight row r, activation row t) for r < n_rows, t < n_tok.
// Every output is bit-identical to the VecDotFn of the same kernel on the same two rows.
using GemmFn = void (*)(const void* w, size_t w_stride, int64_t n_rows, const void* a, size_t a_stride,
                        int64_t n_tok, int64_t n, float* out, int64_t out_stride);

// The gemm over rows packed eight at a time (packed_rows.h): w holds n_groups groups, group_stride
// bytes apart, and group g fills outputs 8g..8g+7 of every token. Bit-identical to GemmFn on the
// same rows unpacked.
using PackedGemmFn = void (*)(const void* w, size_t group_stride, int64_t n_groups, const void* a, size_t a_stride,
                              int64_t n_tok, int64_t n, float* out, int64_t out_stride);

// Rounds one activation row of n floats into the kernel's activation format.
using QuantizeFn = void (*)(const float* x, void* dst, int64_t n);

struct DotKernel {
  DType act_type;       // the activation format: X rows are quantized to it (F32: used as they are)
  QuantizeFn quantize;  // into act_type, byte-identical in both families; nullptr for F32
  VecDotFn dot;         // one output
  GemmFn gemm;          // a tile of outputs reusing weight loads across tokens; nullptr: loop over dot
  const char* name;     // "scalar", "avx2", "avx512vl" or "avx512vnni"
  PackedGemmFn gemm_packed = nullptr;  // the same products over packed rows; nullptr: the kernel does not pack
  // The gemm prepares every token's activations per call (and reads each weight row once whatever
  // the token count): matmul hands it all of a chunk's consecutive rows in one call.
  bool prepares_per_call = false;
};

// Scale and min (6 bits each) of sub-block j (0..7) of a Q4_K/Q5_K block's packed scales[12].
// static: each translation unit (scalar, AVX2) keeps its own copy, compiled with its own flags.
static inline void k_scale_min(const uint8_t* scales, int j, int& scale, int& min) {
  if (j < 4) {
    scale = scales[j] & 63;
    min = scales[j + 4] & 63;
  } else {  // low 4 bits in bytes 8..11, high 2 bits in the top of bytes 0..7
    scale = (scales[j + 4] & 0xF) | ((scales[j - 4] >> 6) << 4);
    min = (scales[j + 4] >> 4) | ((scales[j] >> 6) << 4);
  }
}

// The kernel for this weight type and activation precision, or nullptr when the family has none.
const DotKernel* scalar_kernel(DType weight_type, ActivationPrecision activations);
// call only when use_avx2() (or the CPU has AVX2+FMA+F16C)
const DotKernel* avx2_kernel(DType weight_type, ActivationPrecision activations);
// The AVX2 family with its AVX-512 builds where it has them (the packed-row kernels: f32 activations
// on every quantized type for AVX-512VL, int8 on Q4_0, Q4_1, Q8_0, Q4_K, Q6_K for AVX-512VL with
// VNNI, where the CPU has VNNI): the same outputs, bit for bit. Call only when use_avx512vl().
const DotKernel* avx512_kernel(DType weight_type, ActivationPrecision activations);

// The scalar f32-activation kernels of the quantized types (vec_dot_f32act_scalar.cpp), nullptr for others.
const DotKernel* scalar_f32act_kernel(DType weight_type);

}  // namespace inferscope::cpu
