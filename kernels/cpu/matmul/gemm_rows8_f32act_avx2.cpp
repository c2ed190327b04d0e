// The exact packed-row kernels (gemm_rows8_f32act.h) compiled for AVX2/FMA/F16C: the build every
// x86-64 CPU with those runs, and the reference the AVX-512VL build matches bit for bit.
#include "kernels/cpu/matmul/gemm_rows8_f32act.h"

namespace inferscope::cpu {
namespace {
constexpr char kAvx2[] = "avx2";
}  // namespace

const DotKernel* avx2_rows8_f32act_kernel(DType weight_type) { return rows8_f32act_kernel<kAvx2>(weight_type); }

}  // namespace inferscope::cpu
