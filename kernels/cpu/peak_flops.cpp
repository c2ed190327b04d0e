#include "kernels/cpu/peak_flops.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {

float fma_chains_scalar(int64_t iterations, float seed) {
  float acc[kPeakFmaChains][8];
  for (int c = 0; c < kPeakFmaChains; ++c) std::fill(acc[c], acc[c] + 8, seed + static_cast<float>(c));
  for (int64_t i = 0; i < iterations; ++i) {
    for (auto& chain : acc) {
      for (float& x : chain) x = x * 0.999999f + 1e-7f;
    }
  }
  float total = 0;
  for (const auto& chain : acc) {
    for (float x : chain) total += x;
  }
  return total;
}

PeakFlopsResult measure_peak_flops(ThreadPool& pool, double seconds) {
  const bool avx512 = use_avx512vl(), avx2 = use_avx2();
  const auto chains = avx512 ? fma_chains_avx512 : avx2 ? fma_chains_avx2 : fma_chains_scalar;
  PeakFlopsResult r;
  r.threads = pool.size();
  r.kernel = avx512 ? "avx512-fma" : avx2 ? "avx2-fma" : "scalar";
  constexpr int kPasses = 5;
  const double lanes = avx512 ? 16 : 8;
  const double flops_per_iteration = 2.0 * lanes * kPeakFmaChains;
  // Size a pass from a short calibration run on one thread.
  int64_t iterations = 1 << 14;
  std::vector<float> results(static_cast<size_t>(r.threads), 0.0f);  // every chain's value is used
  const auto t0 = std::chrono::steady_clock::now();
  results[0] = chains(iterations, 1.0f);
  const double calibration = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  iterations = std::max<int64_t>(iterations, static_cast<int64_t>(iterations * (seconds / kPasses) / std::max(calibration, 1e-6)));
  for (int pass = 0; pass < kPasses; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    pool.parallel_for(r.threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) results[static_cast<size_t>(t)] += chains(iterations, static_cast<float>(t));
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.flops_per_second = std::max(r.flops_per_second, flops_per_iteration * static_cast<double>(iterations) * r.threads / s);
  }
  r.checksum = 0;
  for (float v : results) r.checksum += v;
  return r;
}

}  // namespace inferscope
