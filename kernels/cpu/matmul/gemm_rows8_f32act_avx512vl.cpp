// The exact packed-row kernels (gemm_rows8_f32act.h) compiled for AVX-512F/VL besides AVX2: up to
// kRegisterTokens run in registers on 512-bit vectors, two codes of each row side by side
// (run_tokens_paired), and more in token pairs on 512-bit vectors (run_converted_pairs). Every lane
// runs the AVX2 build's operations in their order, so the outputs are the AVX2 build's, bit for bit.
// GCC 12's avx512fintrin.h makes a 512-bit intrinsic's undefined lanes from a vector initialised from
// itself, which -Wuninitialized reports wherever such an intrinsic is inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "kernels/cpu/matmul/gemm_rows8_f32act.h"

namespace inferscope::cpu {
namespace {
constexpr char kAvx512vl[] = "avx512vl";
}  // namespace

const DotKernel* avx512vl_rows8_f32act_kernel(DType weight_type) {
  return rows8_f32act_kernel<kAvx512vl>(weight_type);
}

}  // namespace inferscope::cpu
