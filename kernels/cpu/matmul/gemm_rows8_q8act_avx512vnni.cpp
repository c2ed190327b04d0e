// The int8-activation packed-row kernels (gemm_rows8_q8act.h) compiled for AVX-512F/VL/BW with VNNI
// besides AVX2: every type runs two groups of eight rows side by side on 512-bit vectors, and
// four-code products
// are summed into each row's int32 lane by one instruction (vpdpbusd) instead of a multiply-add to
// int16 and an add. The integers are the AVX2 build's, so are the outputs, bit for bit.
// GCC 12's avx512fintrin.h makes a 512-bit intrinsic's undefined lanes from a vector initialised from
// itself, which -Wuninitialized reports wherever such an intrinsic is inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "kernels/cpu/matmul/gemm_rows8_q8act.h"

namespace inferscope::cpu {
namespace {
constexpr char kAvx512vnni[] = "avx512vnni";
}  // namespace

const DotKernel* avx512vnni_rows8_kernel(DType weight_type) { return rows8_q8act_kernel<kAvx512vnni>(weight_type); }

}  // namespace inferscope::cpu
