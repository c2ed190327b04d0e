// inferscope-cli bench --cpu-kernels: one matmul per weight type, activation precision and token
// count (1: decode; 4: a prefill tile) through every kernel family this CPU runs (scalar, AVX2, and
// the AVX-512VL builds), on random weights small enough to stay in L2 (512 rows of 2048), on one
// thread: the kernels' own speed, without memory bandwidth, threads or the rest of a forward pass.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace inferscope {

struct CpuKernelBenchRow {
  std::string type;         // "q4_0", ...
  std::string activations;  // "f32" (exact) or "q8"
  int32_t tokens = 0;
  std::string kernel;       // the kernel that ran: "scalar", "avx2", "avx512vl"
  double seconds = 0;       // one matmul call, the best of the repetitions
  double macs_per_s = 0;    // weights x tokens / seconds
};

struct CpuKernelBench {
  int64_t rows = 0, cols = 0;
  std::vector<CpuKernelBenchRow> rows_measured;
};

// reps: repetitions of each measurement (each at least 20 ms of calls); the best is kept.
CpuKernelBench run_cpu_kernel_bench(int32_t reps);

nlohmann::json cpu_kernel_bench_json(const CpuKernelBench& bench);
// One table: a row per type, precision and token count, a column per kernel (µs per call, the
// speed-up over the AVX2 kernel).
std::string cpu_kernel_bench_markdown(const CpuKernelBench& bench);

}  // namespace inferscope
