// inferscope-cli bench --cuda-kernels: the CUDA kernels' speed on device 0 against what the device can
// do, on random data (no model): a device-to-device copy's bandwidth (read + write), each GEMV weight
// type's weight-read bandwidth and its fraction of the copy's (both GEMV kernels, on a square matrix
// and on one of few rows), each weight type's prefill GEMM
// (cuBLAS, its dequantization to f16 included) in TFLOP/s at 512 tokens of a 2048 -> 8192 matrix, paged decode attention's K/V read
// bandwidth at contexts 1k, 4k and 16k, and flash against naive attention (time and scratch) for
// one 2048-token prefill. Each figure is the median of `reps` runs after a warm-up, timed with CUDA
// events. Matrices and KV pools are larger than any GPU's L2, so the bandwidths are DRAM's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace inferscope {

struct GemvBenchRow {
  std::string type;    // "f16", "q4_0", ...
  std::string kernel;  // "warp-rows" (the engine's), "split-k" (gpu::GemvKernel), or the dp4a kernel (gpu::gemv_q8)
  int64_t rows = 0, cols = 0;
  int32_t tokens = 0;
  size_t weight_bytes = 0;
  double seconds = 0;
};

struct GemmBenchRow {
  std::string type;
  int32_t tokens = 0;
  int64_t rows = 0, cols = 0;
  double seconds = 0;  // dequantize, round the activations, GEMM
};

struct DecodeAttentionBenchRow {
  int32_t context = 0;    // tokens per sequence
  int32_t sequences = 0;
  std::string kernel;     // "tiles" (gpu::decode_attention, the engine's) or "wide" (gpu::decode_attention_wide)
  size_t kv_bytes = 0;    // K and V read by one call
  double seconds = 0;
};

struct CudaKernelBench {
  std::string device;        // name and compute capability
  double copy_bytes_per_s = 0;  // (read + write) bytes / s of a device-to-device copy
  std::vector<GemvBenchRow> gemv;
  std::vector<GemmBenchRow> gemm;
  std::vector<DecodeAttentionBenchRow> decode_attention;
  int32_t prefill_tokens = 0;
  double flash_seconds = 0, naive_seconds = 0;
  size_t flash_scratch_bytes = 0, naive_scratch_bytes = 0;
};

// Runs every measurement on device 0. Throws std::runtime_error when no CUDA device is usable (the
// reason named) or a CUDA call fails (CudaError: the call and CUDA's message).
CudaKernelBench run_cuda_kernel_bench(int32_t reps);

nlohmann::json cuda_kernel_bench_json(const CudaKernelBench& bench);
// A Markdown table per measurement, each bandwidth with its fraction of the copy's, the GEMM's TFLOP/s.
std::string cuda_kernel_bench_markdown(const CudaKernelBench& bench);

}  // namespace inferscope
