// Naive and flash attention against a double-precision reference on random inputs (never zeros), with
// and without a sliding window, over hand-built paged KV views with shuffled physical blocks; batch
// invariance (thread counts, batch compositions, KV layouts, windows) as bit-identity; scratch
// accounting; the factory and the sweep.
//
// Error bound: every output element o_d is a convex combination sum_j p_j v_jd, so its f32 error is
// measured relative to the magnitude of what is averaged, sum_j p_j |v_jd| (from the reference):
// |o_d - ref_d| <= kTol * sum_j p_j |v_jd|, for both implementations, with kTol = 2e-5: five times
// sqrt(n) * 2^-24 (3.8e-6), the usual estimate of the rounding error of an f32 sum of n terms, for
// the longest contexts here (n = 4099 keys); the factor covers the scores' rounding. Observed worst:
// flash 1.3e-6 (AVX2) / 2.2e-6 (scalar) on random scores, 4.1e-6 with scores growing to ~70 (f32
// scores carry ~|s|·2^-24 of rounding, so the error grows with |s| in any f32 implementation); naive 7.2e-6.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/attention/attention_bench.h"
#include "core/attention/attention_factory.h"
#include "core/attention/flash_attention.h"
#include "core/attention/flash_kernels.h"
#include "core/attention/naive_attention.h"
#include "core/kv/contiguous_kv_cache.h"
#include "core/kv/paged_kv_cache.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/support/hand_kv.h"

namespace inferscope {
namespace {

constexpr double kTol = 2e-5;

struct SeqSpec {
  int32_t n_q = 0;
  int32_t pos0 = 0;
  int32_t ctx() const { return pos0 + n_q; }
};

std::vector<float> random_normal(size_t n, std::mt19937& rng, float sigma) {
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// x rounded to what a cache of `dtype` stores, row by row (q8: each row's Q8_0 blocks dequantized).
std::vector<float> as_stored(std::vector<float> x, DType dtype, int32_t head_dim) {
  std::vector<uint8_t> stored(row_bytes(dtype, head_dim));
  for (size_t r = 0; dtype != DType::F32 && r < x.size(); r += head_dim) {
    quantize_row(dtype, x.data() + r, stored.data(), head_dim);
    dequantize_row(dtype, stored.data(), x.data() + r, head_dim);
  }
  return x;
}

// One sequence: its queries (n_q, n_heads * head_dim) and K/V (ctx, n_kv_heads * head_dim) as stored.
struct SeqData {
  SeqSpec spec;
  std::vector<float> q, k, v;
};

struct Batch {
  AttentionShape shape;
  DType dtype = DType::F16;
  std::vector<SeqData> seqs;
  std::vector<HandKv> kvs;
};

// Random queries and K/V; q_sigma sets how peaked the softmax is (score std ~ q_sigma).
Batch make_batch(const AttentionShape& shape, DType dtype, int32_t block_size, const std::vector<SeqSpec>& specs,
                 std::mt19937& rng, float q_sigma = 1.0f) {
  Batch b{shape, dtype, {}, {}};
  const size_t q_dim = static_cast<size_t>(shape.n_heads) * shape.head_dim;
  const size_t kv_dim = static_cast<size_t>(shape.n_kv_heads) * shape.head_dim;
  for (const SeqSpec& spec : specs) {
    SeqData s{spec, random_normal(q_dim * spec.n_q, rng, q_sigma),
              as_stored(random_normal(kv_dim * spec.ctx(), rng, 1.0f), dtype, shape.head_dim),
              as_stored(random_normal(kv_dim * spec.ctx(), rng, 1.0f), dtype, shape.head_dim)};
    b.kvs.emplace_back(shape, dtype, block_size, spec.ctx(), s.k, s.v, rng);
    b.seqs.push_back(std::move(s));
  }
  return b;
}

// The outputs of one forward() over the sequences `order` (all, in order, when empty), each
// poisoned with NaN first.
std::vector<std::vector<float>> run(Attention& attention, const Batch& b, ThreadPool& pool,
                                    std::vector<size_t> order = {}) {
  if (order.empty()) {
    order.resize(b.seqs.size());
    std::iota(order.begin(), order.end(), 0);
  }
  const size_t q_dim = static_cast<size_t>(b.shape.n_heads) * b.shape.head_dim;
  std::vector<std::vector<float>> outs;
  std::vector<AttentionSeq> seqs;
  for (size_t i : order) outs.emplace_back(q_dim * b.seqs[i].spec.n_q, std::numeric_limits<float>::quiet_NaN());
  for (size_t j = 0; j < order.size(); ++j) {
    const SeqData& s = b.seqs[order[j]];
    seqs.push_back(AttentionSeq{s.q.data(), outs[j].data(), s.spec.n_q, s.spec.pos0, b.kvs[order[j]].view()});
  }
  attention.forward(seqs, b.shape, pool);
  return outs;
}

// softmax(q·K/sqrt(d))·V in double for every query and head, and sum_j p_j |v_jd| (the error scale).
// With a window w, a query at position p sees keys p - w + 1 .. p (those that exist).
struct Reference {
  std::vector<double> out, scale;
};

Reference reference(const SeqData& s, const AttentionShape& shape) {
  const int32_t hd = shape.head_dim, group = shape.n_heads / shape.n_kv_heads;
  Reference ref{std::vector<double>(s.q.size()), std::vector<double>(s.q.size())};
  std::vector<double> p(static_cast<size_t>(s.spec.ctx()));
  for (int32_t i = 0; i < s.spec.n_q; ++i) {
    for (int32_t h = 0; h < shape.n_heads; ++h) {
      const float* q = s.q.data() + (static_cast<size_t>(i) * shape.n_heads + h) * hd;
      const int32_t visible = s.spec.pos0 + i + 1;
      const int32_t first = shape.window > 0 ? std::max(0, visible - shape.window) : 0;
      auto kv_row = [&](const std::vector<float>& x, int32_t t) {
        return x.data() + (static_cast<size_t>(t) * shape.n_kv_heads + h / group) * hd;
      };
      double max = -std::numeric_limits<double>::infinity(), sum = 0.0;
      for (int32_t t = first; t < visible; ++t) {
        double dot = 0.0;
        for (int32_t d = 0; d < hd; ++d) dot += static_cast<double>(q[d]) * kv_row(s.k, t)[d];
        p[t] = dot / std::sqrt(static_cast<double>(hd));
        max = std::max(max, p[t]);
      }
      for (int32_t t = first; t < visible; ++t) sum += p[t] = std::exp(p[t] - max);
      const size_t o = (static_cast<size_t>(i) * shape.n_heads + h) * hd;
      for (int32_t t = first; t < visible; ++t) {
        for (int32_t d = 0; d < hd; ++d) {
          ref.out[o + d] += p[t] / sum * kv_row(s.v, t)[d];
          ref.scale[o + d] += p[t] / sum * std::fabs(kv_row(s.v, t)[d]);
        }
      }
    }
  }
  return ref;
}

// max |got - ref| / scale over the elements (infinity for a NaN; 0 where both are exactly equal, which
// covers a scale of 0: q8 rounds small values to 0, so every value a query sees can be 0).
double max_error(const std::vector<float>& got, const Reference& ref) {
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::fabs(got[i] - ref.out[i]);
    const double e = diff == 0.0 ? 0.0 : diff / ref.scale[i];
    worst = std::isnan(e) ? std::numeric_limits<double>::infinity() : std::max(worst, e);
  }
  return worst;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Decode at context 1 and at a long context (several split chunks, the last partial), a short
// prefill, chunked prefill crossing query tiles, and a multi-token decode that splits.
std::vector<SeqSpec> mixed_specs(int32_t long_ctx) {
  return {{1, 0}, {1, long_ctx - 1}, {37, 0}, {70, 200}, {5, 700}};
}

// Checks naive and flash against the reference (and each other) on every sequence of the batch.
void expect_exact(const Batch& b, ThreadPool& pool, const std::string& what) {
  NaiveAttention naive;
  FlashAttention flash;
  const auto naive_out = run(naive, b, pool), flash_out = run(flash, b, pool);
  for (size_t i = 0; i < b.seqs.size(); ++i) {
    const Reference ref = reference(b.seqs[i], b.shape);
    const std::string where = what + " seq " + std::to_string(i) + " (n_q " + std::to_string(b.seqs[i].spec.n_q) +
                              ", pos0 " + std::to_string(b.seqs[i].spec.pos0) + ")";
    EXPECT_LE(max_error(flash_out[i], ref), kTol) << "flash " << where;
    EXPECT_LE(max_error(naive_out[i], ref), kTol) << "naive " << where;
    // naive vs flash: within the sum of their bounds
    for (size_t e = 0; e < flash_out[i].size(); ++e) {
      ASSERT_LE(std::fabs(flash_out[i][e] - naive_out[i][e]), 2 * kTol * ref.scale[e]) << where << " element " << e;
    }
  }
}

// `gqa` query heads per KV head, over two KV heads (one at GQA 8).
AttentionShape gqa_shape(int32_t gqa, int32_t head_dim, int32_t window = 0) {
  const int32_t n_kv = gqa == 8 ? 1 : 2;
  return AttentionShape{n_kv * gqa, n_kv, head_dim, window};
}

TEST(Attention, MatchesDoubleReferenceAcrossHeadDimsGqaDtypesAndBlockSizes) {
  std::mt19937 rng(5);
  ThreadPool pool(2);
  const int32_t block_sizes[] = {8, 16, 32};
  int32_t c = 0;
  for (int32_t hd : {8, 12, 16, 48, 64, 80, 128}) {
    for (int32_t gqa : {1, 2, 4, 8}) {
      const AttentionShape shape = gqa_shape(gqa, hd);
      const DType dtype = c % 2 == 0 ? DType::F16 : DType::F32;
      const int32_t block_size = block_sizes[c % 3];
      const Batch b = make_batch(shape, dtype, block_size, mixed_specs(300 + 97 * c), rng);
      expect_exact(b, pool,
                   "hd " + std::to_string(hd) + " gqa " + std::to_string(gqa) + " " + std::string(dtype_name(dtype)) +
                       " block " + std::to_string(block_size));
      ++c;
    }
  }
}

// q8 K/V are read as their dequantized Q8_0 blocks: the same bound against the reference on those
// values, at the head dims q8 takes (multiples of 32), paged (shuffled blocks) and contiguous.
TEST(Attention, Q8KvMatchesDoubleReferenceOnTheDequantizedValues) {
  std::mt19937 rng(12);
  ThreadPool pool(2);
  const int32_t block_sizes[] = {0, 8, 16, 32};
  int32_t c = 0;
  for (int32_t hd : {32, 64, 128}) {
    for (int32_t gqa : {1, 3, 8}) {
      const AttentionShape shape = gqa_shape(gqa, hd);
      const int32_t block_size = block_sizes[c % 4];
      const Batch b = make_batch(shape, DType::Q8_0, block_size, mixed_specs(300 + 131 * c), rng);
      expect_exact(b, pool, "q8 hd " + std::to_string(hd) + " gqa " + std::to_string(gqa) + " block " +
                                std::to_string(block_size));
      ++c;
    }
  }
}

TEST(Attention, LongContextsStayExact) {
  std::mt19937 rng(6);
  ThreadPool pool(2);
  const AttentionShape shape{8, 2, 64};
  // decode at 4099 keys (17 chunks, the last of 3 keys), chunked prefill deep into the context,
  // and a 600-token prefill from empty
  const Batch b = make_batch(shape, DType::F16, 16, {{1, 4098}, {64, 3000}, {600, 0}}, rng);
  expect_exact(b, pool, "long");
}

// Windows of one key, under a paged block (8), between a block and a K/V tile (64), at the tile, just
// over it, past a split chunk (256) and longer than the context, each at GQA 1, 3 and 8, paged and
// contiguous; every batch has queries far beyond the window (decode and chunked prefill).
TEST(Attention, SlidingWindowMatchesDoubleReference) {
  std::mt19937 rng(13);
  ThreadPool pool(2);
  const int32_t windows[] = {1, 5, 16, 63, 64, 65, 100, 256, 300, 5000}, gqas[] = {1, 3, 8}, block_sizes[] = {0, 8, 16};
  for (int32_t c = 0; c < 30; ++c) {
    // every window at every GQA; the block size turns with both, so each GQA meets each layout
    const int32_t window = windows[c / 3], gqa = gqas[c % 3], block_size = block_sizes[(c + c / 3) % 3];
    const Batch b = make_batch(gqa_shape(gqa, 32, window), DType::F16, block_size, mixed_specs(900 + 61 * c), rng);
    expect_exact(b, pool, "window " + std::to_string(window) + " gqa " + std::to_string(gqa) + " block " +
                              std::to_string(block_size));
  }
}

// K/V before the window of every query are NaN in the cache: neither implementation lets them in.
TEST(Attention, KeysBeforeTheWindowNeverReachTheOutput) {
  std::mt19937 rng(14);
  ThreadPool pool(2);
  const AttentionShape shape{6, 2, 32, 70};
  Batch b = make_batch(shape, DType::F32, 16, {{1, 600}, {90, 400}}, rng);
  for (size_t i = 0; i < b.seqs.size(); ++i) {
    SeqData& s = b.seqs[i];
    const size_t hidden = static_cast<size_t>(s.spec.pos0 + 1 - shape.window) * shape.n_kv_heads * shape.head_dim;
    std::fill_n(s.k.begin(), hidden, std::numeric_limits<float>::quiet_NaN());
    std::fill_n(s.v.begin(), hidden, std::numeric_limits<float>::quiet_NaN());
    b.kvs[i] = HandKv(shape, b.dtype, 16, s.spec.ctx(), s.k, s.v, rng);
  }
  expect_exact(b, pool, "NaN before the window");
}

TEST(Attention, PeakedAndGrowingScoresStayExact) {
  std::mt19937 rng(7);
  ThreadPool pool(2);
  const AttentionShape shape{4, 2, 32};
  // score std ~ 4: the running max jumps and exp(m_old - m_new) is often tiny
  Batch b = make_batch(shape, DType::F32, 8, {{1, 1500}, {90, 100}}, rng, 4.0f);
  expect_exact(b, pool, "peaked");
  // keys growing along q's direction: the max moves at every tile (scores reach ~50)
  for (SeqData& s : b.seqs) {
    for (int32_t t = 0; t < s.spec.ctx(); ++t) {
      for (int32_t h = 0; h < shape.n_kv_heads; ++h) {
        for (int32_t d = 0; d < shape.head_dim; ++d) {
          s.k[(static_cast<size_t>(t) * shape.n_kv_heads + h) * shape.head_dim + d] += 0.0005f * t * s.q[d];
        }
      }
    }
  }
  std::vector<HandKv> kvs;
  for (const SeqData& s : b.seqs) kvs.emplace_back(shape, b.dtype, 8, s.spec.ctx(), s.k, s.v, rng);
  b.kvs = std::move(kvs);
  expect_exact(b, pool, "growing");
}

TEST(Attention, OutputsAreBitIdenticalAcrossThreadCountsAndBatchCompositions) {
  std::mt19937 rng(8);
  const AttentionShape shape{8, 2, 64};
  const Batch b = make_batch(shape, DType::F16, 16, {{1, 2000}, {40, 0}, {3, 900}, {1, 10}, {100, 300}, {0, 50}}, rng);
  for (const char* name : {"naive", "flash"}) {
    const auto attention = make_attention(name);
    ThreadPool pool1(1), pool2(2), pool3(3);
    const auto want = run(*attention, b, pool1);
    EXPECT_EQ(want[5].size(), 0u);  // an empty sequence takes part without effect
    for (ThreadPool* pool : {&pool2, &pool3}) {
      const auto got = run(*attention, b, *pool);
      for (size_t i = 0; i < b.seqs.size(); ++i) EXPECT_TRUE(same_bits(got[i], want[i])) << name << " seq " << i;
    }
    // each sequence alone, and the batch reversed
    for (size_t i = 0; i < b.seqs.size(); ++i) {
      EXPECT_TRUE(same_bits(run(*attention, b, pool3, {i})[0], want[i])) << name << " seq " << i << " alone";
    }
    const std::vector<size_t> reversed{5, 4, 3, 2, 1, 0};
    const auto got = run(*attention, b, pool2, reversed);
    for (size_t j = 0; j < reversed.size(); ++j) {
      EXPECT_TRUE(same_bits(got[j], want[reversed[j]])) << name << " seq " << reversed[j] << " reversed";
    }
  }
}

// The row of query position `pos` when the sequence's queries run in steps of `step` tokens, with
// the sequence's K/V complete in the cache.
std::vector<float> row_in_steps(Attention& attention, const SeqData& full, const HandKv& kv,
                                const AttentionShape& shape, int32_t pos, int32_t step, ThreadPool& pool) {
  const int32_t pos0 = pos / step * step, n_q = std::min(step, full.spec.ctx() - pos0);
  const size_t q_dim = static_cast<size_t>(shape.n_heads) * shape.head_dim;
  std::vector<float> out(q_dim * n_q, std::numeric_limits<float>::quiet_NaN());
  const AttentionSeq seq{full.q.data() + pos0 * q_dim, out.data(), n_q, pos0, kv.view()};
  attention.forward(std::span(&seq, 1), shape, pool);
  return std::vector<float>(out.begin() + (pos - pos0) * q_dim, out.begin() + (pos - pos0 + 1) * q_dim);
}

// A query's output depends only on its position: full prefill, token-by-token decode, chunked
// prefill and multi-token decode steps (as speculative verification runs) give the same bits, on
// both sides of the split-K chunk boundaries (255/256/257) and deep into the context.
TEST(Attention, EveryRowDependsOnlyOnItsPositionNotOnTheStepItRunsIn) {
  std::mt19937 rng(11);
  ThreadPool pool(2);
  const AttentionShape shape{8, 2, 64};
  for (const int32_t ctx : {1, 255, 256, 257, 1000, 4096}) {
    const Batch b = make_batch(shape, DType::F16, 16, {{ctx, 0}}, rng);
    std::vector<int32_t> positions{0, ctx - 1, ctx / 2};
    for (int32_t p : {254, 255, 256, 257, 511, 512, 513, 767}) {
      if (p < ctx) positions.push_back(p);
    }
    for (const char* name : {"naive", "flash"}) {
      const auto attention = make_attention(name);
      const std::vector<float> prefill = run(*attention, b, pool)[0];
      const size_t q_dim = static_cast<size_t>(shape.n_heads) * shape.head_dim;
      for (const int32_t pos : positions) {
        const std::vector<float> want(prefill.begin() + pos * q_dim, prefill.begin() + (pos + 1) * q_dim);
        for (const int32_t step : {1, 3, 7, 64, 100, 300, 512}) {
          EXPECT_TRUE(same_bits(row_in_steps(*attention, b.seqs[0], b.kvs[0], shape, pos, step, pool), want))
              << name << " ctx " << ctx << " position " << pos << " in steps of " << step;
        }
      }
    }
  }
}

// The same with a window: positions on both sides of where the window starts to slide (w - 1, w) and
// of tile and chunk boundaries, windows shorter than a tile, between a tile and a chunk, and longer.
TEST(Attention, WithAWindowEveryRowStillDependsOnlyOnItsPosition) {
  std::mt19937 rng(15);
  ThreadPool pool(2);
  for (const int32_t window : {1, 40, 64, 100, 300}) {
    const AttentionShape shape{8, 2, 32, window};
    const int32_t ctx = 900;
    const Batch b = make_batch(shape, DType::F16, 16, {{ctx, 0}}, rng);
    for (const char* name : {"naive", "flash"}) {
      const auto attention = make_attention(name);
      const std::vector<float> prefill = run(*attention, b, pool)[0];
      const size_t q_dim = static_cast<size_t>(shape.n_heads) * shape.head_dim;
      for (const int32_t pos : {0, window - 1, window, 255, 256, 320, 511, 600, ctx - 1}) {
        const std::vector<float> want(prefill.begin() + pos * q_dim, prefill.begin() + (pos + 1) * q_dim);
        for (const int32_t step : {1, 3, 64, 100, 512}) {
          EXPECT_TRUE(same_bits(row_in_steps(*attention, b.seqs[0], b.kvs[0], shape, pos, step, pool), want))
              << name << " window " << window << " position " << pos << " in steps of " << step;
        }
      }
    }
  }
}

void expect_paged_bits_equal_contiguous(const AttentionShape& shape, DType dtype, std::mt19937& rng) {
  ThreadPool pool(2);
  const std::vector<SeqSpec> specs{{1, 700}, {50, 33}};
  Batch b = make_batch(shape, dtype, 0, specs, rng);
  for (const char* name : {"naive", "flash"}) {
    const auto attention = make_attention(name);
    const auto want = run(*attention, b, pool);
    for (int32_t block_size : {8, 16, 32}) {
      Batch paged = b;
      paged.kvs.clear();
      for (const SeqData& s : b.seqs) paged.kvs.emplace_back(shape, b.dtype, block_size, s.spec.ctx(), s.k, s.v, rng);
      const auto got = run(*attention, paged, pool);
      for (size_t i = 0; i < specs.size(); ++i) {
        EXPECT_TRUE(same_bits(got[i], want[i])) << dtype_name(dtype) << " " << name << " block " << block_size
                                                << " seq " << i;
      }
    }
  }
}

TEST(Attention, PagedLayoutsGiveTheBitsOfTheContiguousOne) {
  std::mt19937 rng(9);
  expect_paged_bits_equal_contiguous(AttentionShape{6, 3, 48}, DType::F16, rng);
  expect_paged_bits_equal_contiguous(AttentionShape{6, 3, 64}, DType::Q8_0, rng);
}

// Flash over the real caches (written through store(), read through view()) against the reference
// on what `dtype` stores; paged and contiguous give the same bits.
void expect_reads_real_caches(const AttentionShape& shape, DType dtype, std::mt19937& rng) {
  ThreadPool pool(2);
  const KvGeometry geometry{2, shape.n_kv_heads, shape.head_dim, dtype};
  const int32_t ctx = 300, layer = 1;
  PagedKvCache paged(geometry, 16, geometry.bytes_per_token() * 16 * 64, false);
  ContiguousKvCache contiguous(geometry, 512, geometry.bytes_per_token() * 512 * 2);
  // a second sequence interleaved with the first, so the paged one's blocks are not in order
  const size_t kv_dim = static_cast<size_t>(shape.n_kv_heads) * shape.head_dim;
  const std::vector<float> k = random_normal(kv_dim * ctx, rng, 1.0f), v = random_normal(kv_dim * ctx, rng, 1.0f);
  for (KvCache* cache : {static_cast<KvCache*>(&paged), static_cast<KvCache*>(&contiguous)}) {
    for (int32_t t = 0; t < ctx; ++t) {
      for (SeqId seq : {7, 8}) {
        ASSERT_TRUE(cache->allocate(seq, 1));
        for (int32_t l = 0; l < geometry.n_layers; ++l) cache->store(l, seq, t, k.data() + t * kv_dim, v.data() + t * kv_dim);
      }
    }
  }
  Batch b = make_batch(shape, dtype, 16, {{20, ctx - 20}}, rng);
  b.seqs[0].k = as_stored(k, dtype, shape.head_dim);
  b.seqs[0].v = as_stored(v, dtype, shape.head_dim);
  const Reference ref = reference(b.seqs[0], shape);
  FlashAttention flash;
  std::vector<std::vector<float>> outs;
  for (const KvCache* cache : {static_cast<const KvCache*>(&paged), static_cast<const KvCache*>(&contiguous)}) {
    std::vector<float> out(b.seqs[0].q.size(), std::numeric_limits<float>::quiet_NaN());
    const AttentionSeq seq{b.seqs[0].q.data(), out.data(), 20, ctx - 20, cache->view(layer, 8)};
    flash.forward(std::span(&seq, 1), shape, pool);
    EXPECT_LE(max_error(out, ref), kTol) << dtype_name(dtype) << " " << cache->name();
    outs.push_back(out);
  }
  EXPECT_TRUE(same_bits(outs[0], outs[1])) << dtype_name(dtype);
}

TEST(Attention, ReadsTheRealPagedAndContiguousCaches) {
  std::mt19937 rng(10);
  expect_reads_real_caches(AttentionShape{4, 2, 16}, DType::F16, rng);
  expect_reads_real_caches(AttentionShape{4, 2, 32}, DType::Q8_0, rng);
}

TEST(Attention, FlashScratchIsBoundedWhileNaiveGrowsWithQueriesTimesContext) {
  const AttentionShape shape{9, 3, 64};
  NaiveAttention naive;
  FlashAttention flash;
  auto scratch = [&](const Attention& a, int32_t n_q, int32_t ctx) {
    const AttentionSeq seq{nullptr, nullptr, n_q, ctx - n_q, KvView{}};
    return a.scratch_bytes(std::span(&seq, 1), shape);
  };
  // prefill: flash holds one query tile, one K/V tile and one row of scores, whatever the context
  const size_t tile = scratch(flash, 1024, 1024);
  EXPECT_EQ(scratch(flash, 8192, 8192), tile);
  EXPECT_LT(tile, size_t{128} << 10);
  EXPECT_EQ(scratch(naive, 8192, 8192), sizeof(float) * (8192ull * 8192 + 2ull * 8192 * 64));
  // decode: plus the split chunks' partial (m, l, O): 32 chunks x 3 query rows x (64 + 2) floats per KV head
  EXPECT_EQ(scratch(flash, 1, 8192), tile + sizeof(float) * 32 * 3 * 3 * 66);
  EXPECT_EQ(scratch(flash, 1, 256), tile);  // one chunk: no split
}

// A window bounds both: naive's scores cover the keys the step's queries see, flash's decode splits
// only the chunks (256 keys each) the window reaches into, whatever the context.
TEST(Attention, AWindowBoundsTheScratchOfBoth) {
  NaiveAttention naive;
  FlashAttention flash;
  auto scratch = [&](const Attention& a, int32_t window, int32_t n_q, int32_t ctx) {
    const AttentionSeq seq{nullptr, nullptr, n_q, ctx - n_q, KvView{}};
    return a.scratch_bytes(std::span(&seq, 1), AttentionShape{9, 3, 64, window});
  };
  const size_t tile = scratch(flash, 0, 1, 256);
  const size_t chunk = sizeof(float) * 3 * 3 * 66;  // a chunk's partials: 3 query rows x (64 + 2) floats x 3 KV heads
  // window 300 at 8192: keys 7892..8191 in chunks 7680.. and 7936..; at 8491: 8191..8490 in three
  EXPECT_EQ(scratch(flash, 300, 1, 8192), tile + 2 * chunk);
  EXPECT_EQ(scratch(flash, 300, 1, 8491), tile + 3 * chunk);
  EXPECT_EQ(scratch(flash, 300, 1, 1 << 20), tile + 2 * chunk);
  // window 100 at 8192: keys 8092..8191, all in chunk 7936..: no split
  EXPECT_EQ(scratch(flash, 100, 1, 8192), tile);
  // naive: 10 queries at 8182..8191 see keys 7883..8191 (309), one query 300
  EXPECT_EQ(scratch(naive, 300, 10, 8192), sizeof(float) * (10ull * 309 + 2ull * 309 * 64));
  EXPECT_EQ(scratch(naive, 300, 1, 8192), sizeof(float) * (300ull + 2ull * 300 * 64));
}

// The row kernels over several tiles against double: scores exactly as a dot product, the online
// softmax as the full one.
void expect_kernels_exact(const FlashRowKernels& kernels, const char* which) {
  std::mt19937 rng(11);
  for (int32_t hd : {8, 12, 64, 80, 128}) {
    for (int32_t n : {1, 3, 8, 13, 64}) {
      const std::vector<float> q = random_normal(hd, rng, 1.0f);
      std::vector<float> k = random_normal(static_cast<size_t>(hd) * n, rng, 1.0f);
      std::vector<float> s(n);
      kernels.scores(q.data(), k.data(), n, hd, s.data());
      for (int32_t j = 0; j < n; ++j) {
        double dot = 0.0, mag = 0.0;
        for (int32_t d = 0; d < hd; ++d) {
          dot += static_cast<double>(q[d]) * k[j * hd + d];
          mag += std::fabs(static_cast<double>(q[d]) * k[j * hd + d]);
        }
        // sqrt(hd) * 2^-24 of sum |q_d k_d|, the usual f32 dot estimate, is 6.7e-7 at hd 128
        EXPECT_LE(std::fabs(s[j] - dot), 1e-6 * mag) << which << " hd " << hd << " n " << n;
      }
      // three tiles of n scores (log2 domain), then O / l against softmax in double
      const int32_t tiles = 3;
      const std::vector<float> all_s = random_normal(static_cast<size_t>(tiles) * n, rng, 4.0f);
      const std::vector<float> v = random_normal(static_cast<size_t>(tiles) * n * hd, rng, 1.0f);
      float m = -std::numeric_limits<float>::infinity(), l = 0.0f;
      std::vector<float> o(hd, 0.0f);
      for (int32_t t = 0; t < tiles; ++t) {
        std::vector<float> tile_s(all_s.begin() + t * n, all_s.begin() + (t + 1) * n);
        kernels.update(tile_s.data(), n, v.data() + static_cast<size_t>(t) * n * hd, hd, m, l, o.data());
      }
      const double max = *std::max_element(all_s.begin(), all_s.end());
      EXPECT_EQ(m, max) << which;
      double sum = 0.0;
      for (float x : all_s) sum += std::exp2(x - max);
      // 3n terms in (0, 1], each exp2 within a few 2^-24: sqrt(3 * 64) * 2^-24 is 8e-7
      EXPECT_NEAR(l / sum, 1.0, 1e-6) << which << " hd " << hd << " n " << n;
      for (int32_t d = 0; d < hd; ++d) {
        double want = 0.0, scale = 0.0;
        for (int32_t j = 0; j < tiles * n; ++j) {
          want += std::exp2(all_s[j] - max) / sum * v[static_cast<size_t>(j) * hd + d];
          scale += std::exp2(all_s[j] - max) / sum * std::fabs(v[static_cast<size_t>(j) * hd + d]);
        }
        EXPECT_LE(std::fabs(o[d] / l - want), kTol * scale) << which << " hd " << hd << " n " << n << " d " << d;
      }
    }
  }
}

TEST(FlashKernels, ScalarMatchesDouble) { expect_kernels_exact(flash_kernels_scalar(), "scalar"); }

TEST(FlashKernels, Avx2MatchesDouble) {
  if (!use_avx2()) GTEST_SKIP() << "no AVX2/FMA/F16C on this CPU (or INFERSCOPE_FORCE_SCALAR=1)";
  expect_kernels_exact(flash_kernels_avx2(), "avx2");
}

TEST(AttentionFactory, MakesEachNamedImplementation) {
  ASSERT_EQ(attention_names().size(), 2u);
  for (std::string_view name : attention_names()) EXPECT_EQ(make_attention(name)->name(), name);
  EXPECT_THROW(make_attention("sparse"), std::invalid_argument);
}

TEST(AttentionBench, SweepReportsEveryPointWithAgreeingOutputs) {
  ThreadPool pool(2);
  AttentionBenchOptions options;
  options.shape = AttentionShape{4, 2, 32};
  options.contexts = {16, 300};
  options.repeats = 1;
  const std::vector<AttentionBenchRow> rows = run_attention_sweep(options, pool);
  ASSERT_EQ(rows.size(), 8u);
  FlashAttention flash;
  size_t i = 0;
  for (int32_t ctx : options.contexts) {
    for (const char* phase : {"prefill", "decode"}) {
      for (const char* impl : {"naive", "flash"}) {
        const AttentionBenchRow& r = rows[i++];
        EXPECT_EQ(r.implementation, impl);
        EXPECT_EQ(r.phase, phase);
        EXPECT_EQ(r.context, ctx);
        EXPECT_GT(r.seconds_mean, 0.0);
        // each within kTol * sum_j p_j |v_j| of the truth; random N(0, 1) scores spread p, so that sum is
        // about E|v| = 0.8 and the two differ by at most ~2 * kTol * 0.8 = 3.2e-5
        EXPECT_LT(r.max_abs_diff, 1e-4) << impl << " " << phase << " " << ctx;
        const int32_t n_q = std::string(phase) == "prefill" ? ctx : 1;
        const AttentionSeq seq{nullptr, nullptr, n_q, ctx - n_q, KvView{}};
        if (std::string(impl) == "flash") {
          EXPECT_EQ(r.scratch_bytes, flash.scratch_bytes(std::span(&seq, 1), options.shape));
        }
      }
    }
  }
  options.implementations = {"flash", "sparse"};
  EXPECT_THROW(run_attention_sweep(options, pool), std::invalid_argument);
}

}  // namespace
}  // namespace inferscope
