// The peak-FLOPs probe's work for one vector width: kPeakFmaChains independent chains x <- x * a + b,
// each from seed + its index, then every lane of every chain summed. Internal to peak_flops_avx2.cpp
// and peak_flops_avx512.cpp, which compile it for their instruction set (internal linkage, so neither
// build's code can stand in for the other's).
#pragma once
#include <cstdint>

#include "kernels/cpu/peak_flops.h"

namespace inferscope {
namespace {

// Ops: a struct with Vec, kLanes, set1(float), fma(x, a, b), add(x, y) and store(float*, x).
template <class Ops>
float run_fma_chains(int64_t iterations, float seed) {
  using Vec = typename Ops::Vec;
  const Vec a = Ops::set1(0.999999f), b = Ops::set1(1e-7f);
  Vec acc[kPeakFmaChains];
  for (int c = 0; c < kPeakFmaChains; ++c) acc[c] = Ops::set1(seed + static_cast<float>(c));
  for (int64_t i = 0; i < iterations; ++i) {
    // x = x * a + b stays bounded (a < 1), so no lane overflows or turns denormal.
    for (int c = 0; c < kPeakFmaChains; ++c) acc[c] = Ops::fma(acc[c], a, b);
  }
  Vec sum = acc[0];
  for (int c = 1; c < kPeakFmaChains; ++c) sum = Ops::add(sum, acc[c]);
  alignas(64) float lanes[Ops::kLanes];
  Ops::store(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

}  // namespace
}  // namespace inferscope
