// Measures the machine's peak f32 arithmetic: independent fused multiply-adds on every pool thread,
// the compute roof of the roofline (memory_bandwidth.h gives the other).
#pragma once
#include <cstdint>

namespace inferscope {

class ThreadPool;

struct PeakFlopsResult {
  double flops_per_second = 0;  // best pass, all threads
  int threads = 0;
  const char* kernel = "";      // "avx512-fma" (16 lanes), "avx2-fma" (8 lanes) or "scalar"
  double checksum = 0;          // of every chain's result: keeps the work observable
};

// Runs about `seconds` of FMA chains on every pool thread, split into a few passes; reports the best.
// It uses the widest FMA the CPU has: AVX-512 where use_avx512vl(), else AVX2, else scalar.
PeakFlopsResult measure_peak_flops(ThreadPool& pool, double seconds);

// `iterations` rounds of kPeakFmaChains independent FMAs on vectors of 16 (avx512), 8 (avx2, and the
// scalar fallback's arrays) lanes, seeded with `seed`; returns a value that depends on every FMA (so
// none is optimised away). FLOPs: 2 per lane, chain and round.
float fma_chains_avx512(int64_t iterations, float seed);
float fma_chains_avx2(int64_t iterations, float seed);
float fma_chains_scalar(int64_t iterations, float seed);
constexpr int kPeakFmaChains = 10;  // enough independent chains to cover the FMA latency x throughput

}  // namespace inferscope
