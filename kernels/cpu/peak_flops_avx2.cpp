#include <immintrin.h>

#include "kernels/cpu/fma_chains.h"

namespace inferscope {
namespace {

struct Avx2 {
  using Vec = __m256;
  static constexpr int kLanes = 8;
  static Vec set1(float v) { return _mm256_set1_ps(v); }
  static Vec fma(Vec x, Vec a, Vec b) { return _mm256_fmadd_ps(x, a, b); }
  static Vec add(Vec x, Vec y) { return _mm256_add_ps(x, y); }
  static void store(float* out, Vec x) { _mm256_store_ps(out, x); }
};

}  // namespace

float fma_chains_avx2(int64_t iterations, float seed) { return run_fma_chains<Avx2>(iterations, seed); }

}  // namespace inferscope
