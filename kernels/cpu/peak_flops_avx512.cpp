#include <immintrin.h>

#include "kernels/cpu/fma_chains.h"

namespace inferscope {
namespace {

struct Avx512 {
  using Vec = __m512;
  static constexpr int kLanes = 16;
  static Vec set1(float v) { return _mm512_set1_ps(v); }
  static Vec fma(Vec x, Vec a, Vec b) { return _mm512_fmadd_ps(x, a, b); }
  static Vec add(Vec x, Vec y) { return _mm512_add_ps(x, y); }
  static void store(float* out, Vec x) { _mm512_store_ps(out, x); }
};

}  // namespace

float fma_chains_avx512(int64_t iterations, float seed) { return run_fma_chains<Avx512>(iterations, seed); }

}  // namespace inferscope
