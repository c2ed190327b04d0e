#include "core/cli/bench_cpu_kernels.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <map>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kernels/format/dtype.h"
#include "kernels/cpu/matmul/matmul.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {
namespace {

constexpr int64_t kRows = 512, kCols = 2048;  // a Q8_0 matrix is 1.1 MB: L2-resident on most CPUs
constexpr double kMinSeconds = 0.02;           // each repetition times calls for at least this long
const DType kTypes[] = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0,
                        DType::Q4_K, DType::Q5_K, DType::Q6_K};
const KernelChoice kFamilies[] = {KernelChoice::Scalar, KernelChoice::Avx2, KernelChoice::Avx512};

// Seconds per call: the best over reps of the mean over at least kMinSeconds of calls.
template <class Call>
double time_call(Call call, int32_t reps) {
  call();  // warm-up: packing scratch, caches
  double best = 1e30;
  for (int32_t r = 0; r < reps; ++r) {
    int64_t calls = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double s = 0;
    do {
      call();
      ++calls;
      s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (s < kMinSeconds);
    best = std::min(best, s / static_cast<double>(calls));
  }
  return best;
}

}  // namespace

CpuKernelBench run_cpu_kernel_bench(int32_t reps) {
  CpuKernelBench bench;
  bench.rows = kRows;
  bench.cols = kCols;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::vector<float> weights(static_cast<size_t>(kRows * kCols));
  for (float& v : weights) v = normal(rng);
  ThreadPool pool(1);
  for (DType type : kTypes) {
    const size_t row_stride = row_bytes(type, kCols);
    std::vector<uint8_t> data(row_stride * kRows);
    for (int64_t r = 0; r < kRows; ++r) quantize_row(type, weights.data() + r * kCols, data.data() + r * row_stride, kCols);
    for (ActivationPrecision act : {ActivationPrecision::F32, ActivationPrecision::Q8})
      for (int32_t tokens : {1, 4}) {
        std::vector<float> x(static_cast<size_t>(kCols * tokens)), y(static_cast<size_t>(kRows * tokens));
        for (float& v : x) v = normal(rng);
        std::vector<std::string> seen;
        for (KernelChoice family : kFamilies) {
          const std::string kernel = matmul_kernel_name(type, act, family);
          // a family without its own kernel here runs another's (or none): measured once, under its name
          if (kernel == "none" || std::find(seen.begin(), seen.end(), kernel) != seen.end()) continue;
          seen.push_back(kernel);
          const MatmulOptions options{act, family};
          MatrixRef w{type, data.data(), kRows, kCols, row_stride};
          const LargePageBytes packed = pack_rows_for(w, options);
          if (!packed.empty()) w.packed = packed.data();
          const double s = time_call([&] { matmul(w, x.data(), tokens, y.data(), pool, options); }, reps);
          bench.rows_measured.push_back({std::string(dtype_name(type)), act == ActivationPrecision::F32 ? "f32" : "q8",
                                         tokens, kernel, s, static_cast<double>(kRows * kCols * tokens) / s});
        }
      }
  }
  return bench;
}

nlohmann::json cpu_kernel_bench_json(const CpuKernelBench& bench) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CpuKernelBenchRow& r : bench.rows_measured)
    rows.push_back({{"type", r.type}, {"activations", r.activations}, {"tokens", r.tokens}, {"kernel", r.kernel},
                    {"seconds", r.seconds}, {"macs_per_s", r.macs_per_s}});
  return {{"rows", bench.rows}, {"cols", bench.cols}, {"threads", 1}, {"kernels", rows}};
}

std::string cpu_kernel_bench_markdown(const CpuKernelBench& bench) {
  // the kernels in the order first seen, and each (type, activations, tokens) row's times by kernel
  std::vector<std::string> kernels;
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, double>> seconds;
  for (const CpuKernelBenchRow& r : bench.rows_measured) {
    if (std::find(kernels.begin(), kernels.end(), r.kernel) == kernels.end()) kernels.push_back(r.kernel);
    const std::string key = "| " + r.type + " | " + r.activations + " | " + std::to_string(r.tokens) + " |";
    if (seconds.find(key) == seconds.end()) order.push_back(key);
    seconds[key][r.kernel] = r.seconds;
  }
  std::ostringstream out;
  out << "One matmul of " << bench.rows << " x " << bench.cols << " weights (L2-resident), one thread; µs per call"
      << " (speed-up over avx2)\n\n| type | activations | tokens |";
  for (const std::string& k : kernels) out << " " << k << " |";
  out << "\n| --- | --- | ---: |";
  for (size_t i = 0; i < kernels.size(); ++i) out << " ---: |";
  out << "\n" << std::fixed;
  for (const std::string& key : order) {
    const std::map<std::string, double>& by_kernel = seconds[key];
    const auto avx2 = by_kernel.find("avx2");
    out << key;
    for (const std::string& k : kernels) {
      const auto it = by_kernel.find(k);
      if (it == by_kernel.end()) {
        out << " (as avx2) |";
        continue;
      }
      out << " " << std::setprecision(1) << it->second * 1e6;
      if (avx2 != by_kernel.end() && k != "avx2") out << " (" << std::setprecision(2) << avx2->second / it->second << "×)";
      out << " |";
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace inferscope
