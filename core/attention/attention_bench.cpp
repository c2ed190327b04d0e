#include "core/attention/attention_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>

#include "core/attention/attention_factory.h"
#include "core/kv/paged_kv_cache.h"

namespace inferscope {
namespace {

std::vector<float> random_normal(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// A one-layer paged cache holding `context` tokens of random K/V for sequence 0.
std::unique_ptr<PagedKvCache> filled_cache(const AttentionBenchOptions& o, int32_t context, std::mt19937& rng) {
  const KvGeometry geometry{1, o.shape.n_kv_heads, o.shape.head_dim, o.kv_dtype};
  const int32_t blocks = (context + o.block_size - 1) / o.block_size;
  auto cache = std::make_unique<PagedKvCache>(geometry, o.block_size,
                                              geometry.bytes_per_token() * o.block_size * blocks, false);
  cache->allocate(0, context);
  const size_t kv_dim = static_cast<size_t>(o.shape.n_kv_heads) * o.shape.head_dim;
  const std::vector<float> k = random_normal(kv_dim * context, rng), v = random_normal(kv_dim * context, rng);
  for (int32_t t = 0; t < context; ++t) cache->store(0, 0, t, k.data() + t * kv_dim, v.data() + t * kv_dim);
  return cache;
}

}  // namespace

std::vector<AttentionBenchRow> run_attention_sweep(const AttentionBenchOptions& options, ThreadPool& pool) {
  const AttentionShape& shape = options.shape;
  if (shape.n_kv_heads <= 0 || shape.head_dim <= 0 || shape.n_heads % shape.n_kv_heads != 0) {
    throw std::invalid_argument("attention sweep: n_heads must be a positive multiple of n_kv_heads");
  }
  std::vector<std::unique_ptr<Attention>> impls;
  for (const std::string& name : options.implementations) impls.push_back(make_attention(name));

  std::mt19937 rng(options.seed);
  std::vector<AttentionBenchRow> rows;
  const size_t q_dim = static_cast<size_t>(shape.n_heads) * shape.head_dim;
  for (const int32_t context : options.contexts) {
    const std::unique_ptr<PagedKvCache> cache = filled_cache(options, context, rng);
    const std::vector<float> q = random_normal(q_dim * context, rng);
    for (const bool decode : {false, true}) {
      const int32_t n_q = decode ? 1 : context;
      std::vector<float> out(q_dim * n_q), first_out;
      const AttentionSeq seq{q.data() + (context - n_q) * q_dim, out.data(), n_q, context - n_q, cache->view(0, 0)};
      for (const std::unique_ptr<Attention>& impl : impls) {
        AttentionBenchRow row{impl->name(), decode ? "decode" : "prefill", context};
        row.scratch_bytes = impl->scratch_bytes(std::span(&seq, 1), shape);
        impl->forward(std::span(&seq, 1), shape, pool);  // untimed: warms caches, gives the output
        if (first_out.empty()) first_out = out;
        for (size_t i = 0; i < out.size(); ++i) {
          row.max_abs_diff = std::max(row.max_abs_diff, static_cast<double>(std::fabs(out[i] - first_out[i])));
        }
        double sum = 0.0, sum_sq = 0.0;
        for (int32_t r = 0; r < options.repeats; ++r) {
          const auto start = std::chrono::steady_clock::now();
          impl->forward(std::span(&seq, 1), shape, pool);
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          sum += s;
          sum_sq += s * s;
        }
        const double n = std::max(1, options.repeats);
        row.seconds_mean = sum / n;
        row.seconds_sd = std::sqrt(std::max(0.0, sum_sq / n - row.seconds_mean * row.seconds_mean));
        rows.push_back(row);
      }
    }
  }
  return rows;
}

}  // namespace inferscope
