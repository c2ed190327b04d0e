// The int8-activation packed-row kernels (gemm_rows8_q8act.h) compiled for AVX-512F/VL with VNNI
// besides AVX2, still on 256-bit vectors: 32 registers instead of 16, and the K-quants' four-code
// products summed into each row's int32 lane by one instruction (vpdpbusd) instead of a multiply-add
// to int16 and an add. The integers are the AVX2 build's, so are the outputs, bit for bit.
#include "kernels/cpu/matmul/gemm_rows8_q8act.h"

namespace inferscope::cpu {
namespace {
constexpr char kAvx512vnni[] = "avx512vnni";
}  // namespace

const DotKernel* avx512vnni_rows8_kernel(DType weight_type) { return rows8_q8act_kernel<kAvx512vnni>(weight_type); }

}  // namespace inferscope::cpu
