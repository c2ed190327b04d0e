// The exact packed-row kernels (gemm_rows8_f32act.h) compiled for AVX-512F/VL besides AVX2: the
// compiler gets 32 vector registers instead of 16 (the one-token loop's sixteen accumulators no longer
// spill) and folds each activation's broadcast into its multiply-add, and batches of more than
// kRegisterTokens run in token pairs on 512-bit vectors. Every lane runs the AVX2 build's operations
// in their order, so the outputs are the AVX2 build's, bit for bit.
#include "kernels/cpu/matmul/gemm_rows8_f32act.h"

namespace inferscope::cpu {
namespace {
constexpr char kAvx512vl[] = "avx512vl";
}  // namespace

const DotKernel* avx512vl_rows8_f32act_kernel(DType weight_type) {
  return rows8_f32act_kernel<kAvx512vl>(weight_type);
}

}  // namespace inferscope::cpu
