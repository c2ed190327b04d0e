// The int8-activation packed-row kernels (rows8_q8act_gemm.h) compiled for AVX-512F/VL besides AVX2,
// still on 256-bit vectors: 32 registers instead of 16 for a tile's accumulators and codes. The
// source, and so every operation and its order, are the AVX2 build's: the same outputs, bit for bit.
#include "kernels/cpu/rows8_q8act_gemm.h"

namespace inferscope::cpu {
namespace {
constexpr char kAvx512vl[] = "avx512vl";
}  // namespace

const DotKernel* avx512vl_rows8_kernel(DType weight_type) { return rows8_q8act_kernel<kAvx512vl>(weight_type); }

}  // namespace inferscope::cpu
