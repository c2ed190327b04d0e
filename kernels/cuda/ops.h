// The CUDA kernels of the forward pass except attention, as plain C++ calls: every pointer is device
// memory, every call is queued on `stream` (0: the default stream) and checked (CudaError), and each
// kernel's per-element maths is the host-device code of dequant_element.h / ops_element.h.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/format/dtype.h"
#include "kernels/cpu/ops.h"

namespace inferscope::gpu {

// Types the CUDA kernels read as weights: F32, F16, Q8_0, Q4_0, Q4_1.
bool weight_type_supported(DType type);

// A matrix in device memory in its stored format: row r at data + r * row_stride (bytes). MatrixRef's
// fields in a type of its own, so that a host matrix cannot be passed where device memory is expected.
struct DeviceMatrix {
  DType type = DType::F32;
  const void* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  size_t row_stride = 0;
};

// out[t] (cols floats) = row tokens[t] of `table`, decoded, for t < n_tok. Token ids must be < rows.
void embedding(const DeviceMatrix& table, const int32_t* tokens, int64_t n_tok, float* out, cudaStream_t stream);

// For each of n_tok rows of n: residual += delta (skipped when delta is null), then
// out = rmsnorm(residual) * weight (out may alias residual).
void add_rmsnorm(float* residual, const float* delta, const float* weight, float* out, int64_t n_tok, int64_t n,
                 float eps, cudaStream_t stream);

// What RoPE rotates and how (see rope_cos_sin / rope_apply in kernels/cpu/ops.h).
struct RopeShape {
  int64_t n_q_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t rope_dim = 0;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  RopePairing pairing = RopePairing::Adjacent;
  const float* freq_factors = nullptr;  // device, rope_dim/2 values, or null
  bool use_yarn = false;
  RopeYarn yarn;
};

// RoPE in place on q (n_tok x n_q_heads x head_dim) and k (n_tok x n_kv_heads x head_dim), token t at
// positions[t] (device array); each angle computed once per token for all heads.
void rope_qk(float* q, float* k, const int32_t* positions, int64_t n_tok, const RopeShape& shape,
             cudaStream_t stream);

// gate[i] = silu(gate[i]) * up[i] for i < n.
void swiglu(float* gate, const float* up, int64_t n, cudaStream_t stream);

// The most tokens one gemv call takes (a decode step or a speculative verify batch).
constexpr int64_t kGemvMaxTokens = 8;

// How gemv spreads a matrix over the device:
// - WarpRows: each warp owns two rows and walks all their columns (a block of four warps, eight rows);
// - SplitK: each block owns two rows and its four warps split their columns, so a matrix of few rows
//   still fills the device (four times the blocks), the warps' sums added in warp order.
enum class GemvKernel { WarpRows, SplitK };

// Every GemvKernel, and each one's name (bench --cuda-kernels, test messages).
constexpr GemvKernel kGemvKernels[] = {GemvKernel::WarpRows, GemvKernel::SplitK};
constexpr const char* gemv_kernel_name(GemvKernel kernel) { return kernel == GemvKernel::SplitK ? "split-k" : "warp-rows"; }

// Y[t][r] = sum_c W[r][c] * X[t][c] for 1 <= n_tok <= kGemvMaxTokens: X is n_tok rows of w.cols floats,
// Y n_tok rows of w.rows. The weights are read once for all tokens, and every output is one dot
// product in a fixed order (each kernel its own) that does not depend on n_tok (batch invariant, bit
// for bit).
void gemv(const DeviceMatrix& w, const float* x, int64_t n_tok, float* y, cudaStream_t stream,
          GemvKernel kernel = GemvKernel::WarpRows);

// The GEMV with int8 activations (gemv_q8.cu, q8_dot_element.h) reads Q8_0, Q4_0 and Q4_1 weights.
bool gemv_q8_supported(DType type);

// xq (q8_activation_bytes(n_tok, cols), 16-byte aligned) = n_tok rows of cols floats (cols a multiple
// of 32, 1 <= n_tok <= kGemvMaxTokens) quantized per 32 elements as kernels/cpu quantizes Q8_1: the
// same codes and half d, with the codes' sum kept as an integer.
void quantize_q8_activations(const float* x, int64_t n_tok, int64_t cols, void* xq, cudaStream_t stream);

// gemv's Y from activations quantized by quantize_q8_activations (xq 16-byte aligned; Q4_1 weights
// and their row stride 4-byte aligned, or it throws): each weight block meets each
// activation block in integer dot products (dp4a), then in one float product; every output is one
// sum in block order and a fixed butterfly, the same for any n_tok.
void gemv_q8(const DeviceMatrix& w, const void* xq, int64_t n_tok, float* y, cudaStream_t stream);

// out (w.rows x w.cols IEEE halves, row-major, no padding) = every weight decoded as the GEMV decodes
// it (weight_formats.cuh), rounded to the nearest half: the cuBLAS GEMM's weights (gemm.h).
void dequantize_f16(const DeviceMatrix& w, uint16_t* out, cudaStream_t stream);

// Stores n_tok tokens' K and V (k, v: n_tok x n_kv_heads x head_dim floats) into a KV cache's device
// pools: token t's row of KV head h goes to k_rows[t] + h * head_stride (V: v_rows[t] + ...), in dtype
// F16 or F32 (anything else throws std::invalid_argument). k_rows and v_rows are device arrays.
void kv_store(const float* k, const float* v, uint8_t* const* k_rows, uint8_t* const* v_rows, int64_t n_tok,
              int64_t n_kv_heads, int64_t head_dim, size_t head_stride, DType dtype, cudaStream_t stream);

// best[t] = the index of row t's largest logit (n_tok rows of n), as core/sample's argmax picks it.
void argmax(const float* logits, int64_t n_tok, int64_t n, int32_t* best, cudaStream_t stream);

}  // namespace inferscope::gpu
