// The roofline's probes: the peak-FLOPs kernels compute what their scalar reference computes (so the
// timed work is real), the widest one the CPU has is the one timed, and both probes report plausible,
// finite figures.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/memory_bandwidth.h"
#include "kernels/cpu/peak_flops.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {
namespace {

// What every chain computes: x <- fma(x, a, b), iterations times, from seed + chain; summed over
// `lanes` lanes.
double fma_chains_reference(int64_t iterations, float seed, int lanes = 8) {
  double total = 0;
  for (int c = 0; c < kPeakFmaChains; ++c) {
    float x = seed + static_cast<float>(c);
    for (int64_t i = 0; i < iterations; ++i) x = std::fma(x, 0.999999f, 1e-7f);
    total += lanes * static_cast<double>(x);
  }
  return total;
}

TEST(PeakFlops, KernelsComputeEveryChain) {
  for (const int64_t iterations : {1, 7, 1000, 100000}) {
    const float seed = 0.25f * static_cast<float>(iterations % 5);
    const double reference = fma_chains_reference(iterations, seed);
    // The AVX2 kernel rounds once per FMA like the reference; only the final sum's order differs.
    if (use_avx2()) {
      EXPECT_NEAR(fma_chains_avx2(iterations, seed), reference, 1e-6 * reference) << iterations;
    }
    if (use_avx512vl()) {
      const double reference16 = fma_chains_reference(iterations, seed, 16);
      EXPECT_NEAR(fma_chains_avx512(iterations, seed), reference16, 1e-6 * reference16) << iterations;
    }
    // The scalar fallback multiplies and adds (rounding twice): its drift grows with the iterations.
    if (iterations <= 7) {
      EXPECT_NEAR(fma_chains_scalar(iterations, seed), reference, 1e-6 * reference) << iterations;
    }
  }
}

TEST(PeakFlops, MeasuresAPlausiblePeakOnEveryThread) {
  ThreadPool pool(2);
  const PeakFlopsResult r = measure_peak_flops(pool, 0.1);
  EXPECT_EQ(r.threads, 2);
  EXPECT_TRUE(std::isfinite(r.checksum));
  // The widest FMA the CPU has.
  EXPECT_STREQ(r.kernel, use_avx512vl() ? "avx512-fma" : use_avx2() ? "avx2-fma" : "scalar");
  // Above 0.1 GFLOP/s per thread, below 2 FMA ports x 16 lanes x 2 FLOPs at 6 GHz per thread.
  EXPECT_GT(r.flops_per_second, 2 * 0.1e9);
  EXPECT_LT(r.flops_per_second, 2 * 64 * 6e9);
}

TEST(MemoryBandwidth, MeasuresAPlausibleReadRate) {
  ThreadPool pool(2);
  const BandwidthResult r = measure_read_bandwidth(pool, size_t{64} << 20, 2);
  EXPECT_EQ(r.repetitions, 2);
  EXPECT_GE(r.buffer_bytes, size_t{64} << 20);
  EXPECT_GT(r.read_bytes_per_second, 0.1e9);
  EXPECT_LT(r.read_bytes_per_second, 10e12);
}

}  // namespace
}  // namespace inferscope
