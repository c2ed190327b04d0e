// PagedKvCache (vLLM's PagedAttention memory manager) and its parts: the block pool (ref counts,
// free list, LRU of cached blocks) and the prefix cache (exact block lookup by hash chain).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/kv/block_pool.h"
#include "core/kv/paged_kv_cache.h"
#include "core/kv/prefix_cache.h"
#include "kernels/cpu/quantize.h"
#include "tests/support/kv_store_bound.h"

namespace inferscope {
namespace {

constexpr int32_t kLayers = 2;
constexpr int32_t kHeads = 2;
constexpr int32_t kHeadDim = 4;

KvGeometry geometry(DType dtype = DType::F32) { return KvGeometry{kLayers, kHeads, kHeadDim, dtype}; }

size_t bytes_of_block(int32_t block_size, DType dtype = DType::F32) {
  return geometry(dtype).bytes_per_token() * static_cast<size_t>(block_size);
}

PagedKvCache make_cache(int32_t block_size, int32_t n_blocks, bool prefix_cache = true, DType dtype = DType::F32) {
  return PagedKvCache(geometry(dtype), block_size, bytes_of_block(block_size, dtype) * n_blocks, prefix_cache);
}

// The K (which = 0) or V (which = 1) element every test writes for `token` at `pos`: exact in f32
// (token < 64, pos < 256) and different for every token, position, layer, head, element and K/V.
float kv_value(int32_t token, int32_t pos, int32_t layer, int32_t head, int32_t d, int32_t which) {
  const int32_t lane = ((layer * kHeads + head) * kHeadDim + d) * 2 + which;
  return static_cast<float>(token * 256 + pos) + static_cast<float>(lane) / 128.0f;
}

// Stores K/V of positions [from, to) of `seq`, whose token ids are `tokens`, in every layer.
void store_tokens(PagedKvCache& kv, SeqId seq, const std::vector<int32_t>& tokens, size_t from, size_t to) {
  std::vector<float> k(kHeads * kHeadDim), v(kHeads * kHeadDim);
  for (size_t pos = from; pos < to; ++pos) {
    const int32_t p = static_cast<int32_t>(pos);
    for (int32_t l = 0; l < kLayers; ++l) {
      for (int32_t h = 0; h < kHeads; ++h) {
        for (int32_t d = 0; d < kHeadDim; ++d) {
          k[h * kHeadDim + d] = kv_value(tokens[pos], p, l, h, d, 0);
          v[h * kHeadDim + d] = kv_value(tokens[pos], p, l, h, d, 1);
        }
      }
      kv.store(l, seq, p, k.data(), v.data());
    }
  }
}

float read_f32(const uint8_t* p) {
  float x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

// Every layer's view of `seq` reads back exactly the values of `tokens` at their positions.
::testing::AssertionResult holds_tokens(const PagedKvCache& kv, SeqId seq, const std::vector<int32_t>& tokens) {
  for (int32_t l = 0; l < kLayers; ++l) {
    const KvView view = kv.view(l, seq);
    if (view.length != static_cast<int32_t>(tokens.size())) {
      return ::testing::AssertionFailure() << "sequence " << seq << " has length " << view.length;
    }
    for (int32_t t = 0; t < view.length; ++t) {
      for (int32_t h = 0; h < kHeads; ++h) {
        for (int32_t d = 0; d < kHeadDim; ++d) {
          const float k = read_f32(view.key(t, h, kHeadDim) + d * sizeof(float));
          const float v = read_f32(view.value(t, h, kHeadDim) + d * sizeof(float));
          if (k != kv_value(tokens[t], t, l, h, d, 0) || v != kv_value(tokens[t], t, l, h, d, 1)) {
            return ::testing::AssertionFailure() << "sequence " << seq << " layer " << l << " pos " << t << " head "
                                                 << h << " elt " << d << ": K " << k << " V " << v;
          }
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

// A readable dump of everything a snapshot and the stats say, to compare before and after.
std::string describe(const PagedKvCache& kv) {
  std::ostringstream out;
  const KvSnapshot snap = kv.snapshot();
  for (size_t b = 0; b < snap.blocks.size(); ++b) {
    const KvSnapshot::Block& blk = snap.blocks[b];
    out << "block " << b << " ref " << blk.ref_count << " fill " << blk.filled << " cached " << blk.cached << " hash "
        << blk.hash << " owners";
    for (SeqId o : blk.owners) out << ' ' << o;
    out << '\n';
  }
  for (const KvSnapshot::Sequence& s : snap.sequences) {
    out << "seq " << s.id << " len " << s.length << " table";
    for (int32_t b : s.block_table) out << ' ' << b;
    out << '\n';
  }
  const KvStats st = kv.stats();
  out << "queries " << st.prefix_cache_queries << " hits " << st.prefix_cache_hits << " evictions " << st.evictions;
  return out.str();
}

std::vector<int32_t> iota_tokens(int32_t n, int32_t first = 1) {
  std::vector<int32_t> t(n);
  for (int32_t i = 0; i < n; ++i) t[i] = first + i % 50;
  return t;
}

// Allocates `tokens` (all of them, ids given) for a new sequence and stores their K/V.
void add_sequence(PagedKvCache& kv, SeqId seq, const std::vector<int32_t>& tokens) {
  ASSERT_TRUE(kv.allocate(seq, static_cast<int32_t>(tokens.size()), tokens));
  store_tokens(kv, seq, tokens, 0, tokens.size());
}

std::vector<int32_t> table_of(const PagedKvCache& kv, SeqId seq) {
  for (const KvSnapshot::Sequence& s : kv.snapshot().sequences) {
    if (s.id == seq) return s.block_table;
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// The parts

TEST(BlockPool, TakesFreeBlocksFirstThenEvictsLeastRecentlyCached) {
  BlockPool pool(3);
  const int32_t a = pool.take().block, b = pool.take().block, c = pool.take().block;
  EXPECT_EQ(pool.available(), 0);
  pool.release(b, true);  // cached first: least recently used
  pool.release(a, true);
  pool.release(c, false);  // free
  EXPECT_EQ(pool.free_count(), 1);
  EXPECT_EQ(pool.cached_count(), 2);
  const BlockPool::Taken first = pool.take();
  EXPECT_EQ(first.block, c);
  EXPECT_FALSE(first.evicted);
  const BlockPool::Taken second = pool.take();
  EXPECT_EQ(second.block, b);
  EXPECT_TRUE(second.evicted);
  pool.retain(a);  // a cached block in use again leaves the LRU list
  EXPECT_EQ(pool.cached_count(), 0);
  EXPECT_EQ(pool.ref_count(a), 1);
  EXPECT_THROW(pool.take(), std::logic_error);
}

TEST(BlockPool, DoubleFreeAndSharingAFreeBlockThrow) {
  BlockPool pool(2);
  const int32_t a = pool.take().block;
  pool.retain(a);
  pool.release(a, false);
  EXPECT_EQ(pool.ref_count(a), 1);
  pool.release(a, false);
  EXPECT_THROW(pool.release(a, false), std::logic_error);
  EXPECT_THROW(pool.retain(a), std::logic_error);
  EXPECT_EQ(pool.free_count(), 2);
}

TEST(PrefixCache, HashChainsDependOnParentAndEveryToken) {
  const std::vector<int32_t> a = {1, 2, 3, 4}, b = {1, 2, 3, 5};
  EXPECT_NE(prefix_block_hash(0, a), 0u);
  EXPECT_EQ(prefix_block_hash(0, a), prefix_block_hash(0, a));
  EXPECT_NE(prefix_block_hash(0, a), prefix_block_hash(0, b));
  EXPECT_NE(prefix_block_hash(0, a), prefix_block_hash(prefix_block_hash(0, b), a));
}

TEST(PrefixCache, CollidingHashNeverMatchesOtherTokens) {
  PrefixCache cache(4);
  const std::vector<int32_t> a = {1, 2, 3, 4}, b = {9, 9, 9, 9};
  const uint64_t key = 42;  // as if a and b collided on this key
  const std::optional<PrefixCache::Holder> first = cache.insert(0, key, std::nullopt, a).holder;
  ASSERT_TRUE(first);
  EXPECT_EQ(first->block, 0);
  EXPECT_EQ(cache.find(key, std::nullopt, a), first);
  EXPECT_FALSE(cache.find(key, std::nullopt, b));
  EXPECT_FALSE(cache.find(key, first, a));               // same tokens after another parent
  EXPECT_FALSE(cache.insert(1, key, std::nullopt, b).holder);  // the live holder keeps its key
  EXPECT_FALSE(cache.findable(1));
  EXPECT_EQ(cache.find(key, std::nullopt, a), first);
}

TEST(PrefixCache, DuplicateBlockPointsAtTheFirstHolder) {
  PrefixCache cache(4);
  const std::vector<int32_t> a = {1, 2};
  const uint64_t h = prefix_block_hash(0, a);
  const std::optional<PrefixCache::Holder> first = cache.insert(0, h, std::nullopt, a).holder;
  const std::optional<PrefixCache::Holder> again = cache.insert(1, h, std::nullopt, a).holder;
  EXPECT_EQ(again, first);  // block 1 holds the same prefix: children chain on block 0
  EXPECT_FALSE(cache.findable(1));
  EXPECT_EQ(cache.hash(1), 0u);
  EXPECT_EQ(cache.hash(0), h);
}

TEST(PrefixCache, ChildOfAForgottenParentIsStaleAndDisplaced) {
  PrefixCache cache(4);
  const std::vector<int32_t> a = {1, 2}, b = {3, 4};
  const uint64_t ha = prefix_block_hash(0, a), hb = prefix_block_hash(ha, b);
  const std::optional<PrefixCache::Holder> p0 = cache.insert(0, ha, std::nullopt, a).holder;
  ASSERT_TRUE(cache.insert(1, hb, p0, b).holder);
  EXPECT_TRUE(cache.find(hb, p0, b));
  cache.forget(0);  // block 0 is reused for other data, then registered again with the same tokens
  const std::optional<PrefixCache::Holder> p1 = cache.insert(0, ha, std::nullopt, a).holder;
  ASSERT_TRUE(p1);
  EXPECT_FALSE(cache.find(hb, p1, b));  // block 1 was registered under block 0's old contents
  EXPECT_FALSE(cache.insert(3, hb, p0, b).holder);  // nor can anything chain on the old parent
  const PrefixCache::Inserted r = cache.insert(2, hb, p1, b);
  ASSERT_TRUE(r.holder);
  EXPECT_EQ(r.holder->block, 2);
  EXPECT_EQ(r.displaced, 1);
  EXPECT_FALSE(cache.findable(1));
  EXPECT_EQ(cache.find(hb, p1, b), r.holder);
}

// ---------------------------------------------------------------------------------------------
// Configuration and layout

TEST(PagedKvCache, BudgetBecomesWholeBlocksOfEachSize) {
  for (int32_t bs : {8, 16, 32}) {
    const PagedKvCache kv(geometry(), bs, bytes_of_block(bs) * 5 + bytes_of_block(bs) - 1, true);
    EXPECT_EQ(kv.block_size(), bs);
    EXPECT_EQ(kv.block_bytes(), bytes_of_block(bs));
    EXPECT_EQ(kv.total_blocks(), 5);
    EXPECT_EQ(kv.stats().budget_bytes, 5 * bytes_of_block(bs));
    EXPECT_EQ(kv.name(), "paged");
  }
}

TEST(PagedKvCache, BadBlockSizeBudgetOrDtypeThrowsClearly) {
  for (int32_t bs : {0, 4, 7, 12, 64}) {
    try {
      PagedKvCache(geometry(), bs, 1 << 20, true);
      ADD_FAILURE() << "block size " << bs << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("block size " + std::to_string(bs)), std::string::npos) << e.what();
    }
  }
  try {
    PagedKvCache(geometry(), 16, bytes_of_block(16) - 1, true);
    ADD_FAILURE() << "a budget below one block accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("cannot hold one block"), std::string::npos) << e.what();
  }
  try {
    PagedKvCache(geometry(DType::Q8_0), 16, 1 << 20, true);
    ADD_FAILURE() << "q8 with head_dim 4 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "--kv-dtype q8 needs a head dimension that is a multiple of 32 (this model: 4)");
  }
  EXPECT_THROW(PagedKvCache(geometry(DType::Q4_1), 16, 1 << 20, true), std::invalid_argument);
  EXPECT_THROW(PagedKvCache((KvGeometry{0, 2, 4, DType::F16}), 16, 1 << 20, true), std::invalid_argument);
}

TEST(PagedKvCache, ViewFollowsTheDocumentedBlockLayout) {
  PagedKvCache kv = make_cache(8, 6);
  const std::vector<int32_t> other = iota_tokens(5, 30);
  add_sequence(kv, 1, other);  // takes a block, so sequence 2's blocks are not 0, 1, 2
  const std::vector<int32_t> tokens = iota_tokens(20);
  add_sequence(kv, 2, tokens);
  const size_t elt = sizeof(float);
  for (int32_t l = 0; l < kLayers; ++l) {
    const KvView view = kv.view(l, 2);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(view.k_base) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(view.v_base) % 64, 0u);
    EXPECT_EQ(view.head_stride, 8 * kHeadDim * elt);
    EXPECT_EQ(view.block_stride, kHeads * view.head_stride);
    EXPECT_EQ(view.block_size, 8);
    EXPECT_EQ(view.dtype, DType::F32);
    EXPECT_EQ(std::vector<int32_t>(view.block_table, view.block_table + 3), table_of(kv, 2));
    for (int32_t t = 0; t < 20; ++t) {
      for (int32_t h = 0; h < kHeads; ++h) {
        const size_t offset =
            view.block_table[t / 8] * view.block_stride + h * view.head_stride + (t % 8) * kHeadDim * elt;
        EXPECT_EQ(view.key(t, h, kHeadDim), view.k_base + offset);
        EXPECT_EQ(view.value(t, h, kHeadDim), view.v_base + offset);
      }
    }
  }
  // Reads across block boundaries (positions 6..10 span blocks 0 and 1) and in every layer and head.
  EXPECT_TRUE(holds_tokens(kv, 2, tokens));
  EXPECT_TRUE(holds_tokens(kv, 1, other));
}

TEST(PagedKvCache, F16StoresRoundToHalfPrecision) {
  PagedKvCache kv = make_cache(16, 2, true, DType::F16);
  ASSERT_TRUE(kv.allocate(0, 20));
  std::vector<float> k(kHeads * kHeadDim), v(kHeads * kHeadDim);
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = 0.1f * static_cast<float>(i) - 0.3f;
    v[i] = -2.5f + static_cast<float>(i);
  }
  kv.store(1, 0, 17, k.data(), v.data());
  const KvView view = kv.view(1, 0);
  EXPECT_EQ(view.head_stride, 16 * kHeadDim * 2u);
  for (int32_t h = 0; h < kHeads; ++h) {
    for (int32_t d = 0; d < kHeadDim; ++d) {
      uint16_t kh, vh;
      std::memcpy(&kh, view.key(17, h, kHeadDim) + 2 * d, 2);
      std::memcpy(&vh, view.value(17, h, kHeadDim) + 2 * d, 2);
      EXPECT_EQ(kh, f32_to_fp16(k[h * kHeadDim + d]));
      EXPECT_EQ(fp16_to_f32(vh), v[h * kHeadDim + d]);  // small integers plus halves are exact
    }
  }
}

// ---------------------------------------------------------------------------------------------
// q8: Q8_0 rows (head_dim / 32 blocks of 32 int8 and an f16 scale) through every block operation

constexpr int32_t kQ8HeadDim = 64;  // two Q8_0 blocks per row

// Random K (which 0) or V (which 1) of every head for (token, pos, layer), with an outlier 40x
// the rest in one place: reproducible, so a check can recompute what was stored.
std::vector<float> q8_test_row(int32_t token, int32_t pos, int32_t layer, int32_t which) {
  std::mt19937 rng(static_cast<uint32_t>(((token * 1024 + pos) * kLayers + layer) * 2 + which));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> row(kHeads * kQ8HeadDim);
  for (float& x : row) x = normal(rng);
  row[rng() % row.size()] *= 40.0f;
  return row;
}

void store_q8_tokens(PagedKvCache& kv, SeqId seq, const std::vector<int32_t>& tokens, size_t from, size_t to) {
  for (size_t pos = from; pos < to; ++pos) {
    const int32_t p = static_cast<int32_t>(pos);
    for (int32_t l = 0; l < kLayers; ++l) {
      kv.store(l, seq, p, q8_test_row(tokens[pos], p, l, 0).data(), q8_test_row(tokens[pos], p, l, 1).data());
    }
  }
}

// Every row of `seq` is byte for byte quantize_row's Q8_0 encoding of what was stored for its token,
// and reads back within the Q8_0 bound of it.
::testing::AssertionResult holds_q8_tokens(const PagedKvCache& kv, SeqId seq, const std::vector<int32_t>& tokens) {
  const size_t row_bytes = kv.geometry().row_bytes();
  std::vector<uint8_t> want(row_bytes);
  std::vector<float> got(kQ8HeadDim);
  for (int32_t l = 0; l < kLayers; ++l) {
    const KvView view = kv.view(l, seq);
    if (view.length != static_cast<int32_t>(tokens.size())) {
      return ::testing::AssertionFailure() << "sequence " << seq << " has length " << view.length;
    }
    for (int32_t t = 0; t < view.length; ++t) {
      for (int32_t which : {0, 1}) {
        const std::vector<float> row = q8_test_row(tokens[t], t, l, which);
        for (int32_t h = 0; h < kHeads; ++h) {
          const float* x = row.data() + h * kQ8HeadDim;
          const uint8_t* stored = which == 0 ? view.key(t, h, kQ8HeadDim) : view.value(t, h, kQ8HeadDim);
          quantize_row(DType::Q8_0, x, want.data(), kQ8HeadDim);
          dequantize_row(DType::Q8_0, stored, got.data(), kQ8HeadDim);
          const bool same = std::memcmp(stored, want.data(), row_bytes) == 0;
          for (int32_t d = 0; same && d < kQ8HeadDim; ++d) {
            if (std::fabs(got[d] - x[d]) > test::kv_store_bound(DType::Q8_0, x, d)) {
              return ::testing::AssertionFailure() << "element " << d << " reads " << got[d] << " for " << x[d];
            }
          }
          if (!same) {
            return ::testing::AssertionFailure() << "sequence " << seq << " layer " << l << " pos " << t << " head "
                                                 << h << (which == 0 ? " K" : " V") << " is not the stored row";
          }
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(PagedKvCache, Q8RowsSurviveForkCopyOnWriteTruncateAndPrefixReuse) {
  const KvGeometry g{kLayers, kHeads, kQ8HeadDim, DType::Q8_0};
  EXPECT_EQ(g.row_bytes(), 2u * 34);
  PagedKvCache kv(g, 16, g.bytes_per_token() * 16 * 8, true);
  EXPECT_EQ(kv.block_bytes(), 16u * 2 * kLayers * kHeads * 68);
  EXPECT_EQ(kv.total_blocks(), 8);

  const std::vector<int32_t> parent = iota_tokens(40);  // blocks: full, full, 8 of 16
  ASSERT_TRUE(kv.allocate(1, 40, parent));
  store_q8_tokens(kv, 1, parent, 0, parent.size());
  EXPECT_EQ(kv.view(0, 1).dtype, DType::Q8_0);
  EXPECT_EQ(kv.view(0, 1).head_stride, 16u * 68);
  EXPECT_TRUE(holds_q8_tokens(kv, 1, parent));

  // fork, then the child writes into the shared partial tail: copy-on-write of q8 blocks
  ASSERT_TRUE(kv.fork(1, 2));
  std::vector<int32_t> child = parent;
  child.push_back(77);
  ASSERT_TRUE(kv.allocate(2, 1, std::vector<int32_t>{77}));
  store_q8_tokens(kv, 2, child, 40, 41);
  EXPECT_NE(table_of(kv, 2)[2], table_of(kv, 1)[2]);
  EXPECT_EQ(kv.stats().blocks_shared, 2);
  EXPECT_TRUE(holds_q8_tokens(kv, 1, parent));
  EXPECT_TRUE(holds_q8_tokens(kv, 2, child));

  // truncate the child into a shared full block and write: that block is copied too
  kv.truncate(2, 20);
  child.resize(20);
  child.push_back(78);
  ASSERT_TRUE(kv.allocate(2, 1, std::vector<int32_t>{78}));
  store_q8_tokens(kv, 2, child, 20, 21);
  EXPECT_NE(table_of(kv, 2)[1], table_of(kv, 1)[1]);
  EXPECT_EQ(table_of(kv, 2)[0], table_of(kv, 1)[0]);
  EXPECT_TRUE(holds_q8_tokens(kv, 1, parent));
  EXPECT_TRUE(holds_q8_tokens(kv, 2, child));

  // the parent's two full blocks are reused by a new sequence with the same prompt
  kv.free(1);
  kv.free(2);
  EXPECT_EQ(kv.attach_prefix(3, parent), 32);
  ASSERT_TRUE(kv.allocate(3, 8, std::span(parent).subspan(32)));
  store_q8_tokens(kv, 3, parent, 32, 40);
  EXPECT_TRUE(holds_q8_tokens(kv, 3, parent));
  const KvSnapshot snap = kv.snapshot();
  ASSERT_EQ(snap.sequences.size(), 1u);
  EXPECT_EQ(snap.sequences[0].length, 40);
  EXPECT_EQ(snap.blocks[snap.sequences[0].block_table[2]].filled, 8);
  EXPECT_EQ(kv.stats().prefix_cache_hits, 32);
}

TEST(PagedKvCache, StoreOutsideTheSequenceThrows) {
  PagedKvCache kv = make_cache(8, 2);
  ASSERT_TRUE(kv.allocate(0, 3));
  const std::vector<float> row(kHeads * kHeadDim, 1.0f);
  EXPECT_THROW(kv.store(0, 0, 3, row.data(), row.data()), std::out_of_range);
  EXPECT_THROW(kv.store(kLayers, 0, 0, row.data(), row.data()), std::out_of_range);
  EXPECT_THROW(kv.store(0, 9, 0, row.data(), row.data()), std::out_of_range);
  EXPECT_THROW(kv.view(0, 9), std::out_of_range);
  EXPECT_THROW(kv.allocate(0, 2, std::vector<int32_t>{1, 2, 3}), std::invalid_argument);  // 3 ids for 2 tokens
}

// Speculative decoding: slots allocated without ids (drafts) are named once accepted; only blocks
// whose ids are all known become findable, and a rejected tail never does.
TEST(PagedKvCache, SlotsNamedAfterTheFactBecomeReusable) {
  PagedKvCache kv = make_cache(8, 8);
  std::vector<int32_t> ids(17);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = 10 + static_cast<int32_t>(i);
  ASSERT_TRUE(kv.allocate(0, 6, std::span(ids).first(6)));
  // One known token and four draft slots: block 0 fills up with one unknown id in it.
  ASSERT_TRUE(kv.allocate(0, 5, std::span(ids).subspan(6, 1)));
  EXPECT_EQ(kv.attach_prefix(1, ids), 0);  // block 0 is not named yet
  kv.free(1);
  // One draft accepted (position 7), three rejected: the cache keeps 8 tokens and is told the new id.
  kv.truncate(0, 8);
  kv.name_tokens(0, std::span(ids).subspan(7, 1));
  EXPECT_EQ(kv.attach_prefix(1, ids), 8);  // block 0 (10..17) is findable now
  kv.free(1);
  // Ids past the sequence's length are ignored, never registered.
  kv.name_tokens(0, std::span(ids).subspan(8, 4));
  EXPECT_EQ(kv.attach_prefix(2, ids), 8);
}

// ---------------------------------------------------------------------------------------------
// Allocation, out of memory

TEST(PagedKvCache, AllocatesBlocksOnDemand) {
  PagedKvCache kv = make_cache(8, 4);
  EXPECT_EQ(kv.length(3), 0);
  ASSERT_TRUE(kv.allocate(3, 0));  // a new, empty sequence holds nothing
  EXPECT_EQ(kv.stats().blocks_used, 0);
  EXPECT_EQ(kv.stats().sequences, 1);
  ASSERT_TRUE(kv.allocate(3, 1));
  EXPECT_EQ(kv.stats().blocks_used, 1);
  ASSERT_TRUE(kv.allocate(3, 7));  // exactly fills the first block
  EXPECT_EQ(kv.stats().blocks_used, 1);
  ASSERT_TRUE(kv.allocate(3, 1));
  EXPECT_EQ(kv.stats().blocks_used, 2);
  EXPECT_EQ(kv.length(3), 9);
  kv.free(3);
  kv.free(3);  // twice, or unknown: no-op
  EXPECT_EQ(kv.stats().blocks_free, 4);
  EXPECT_EQ(kv.stats().sequences, 0);
}

TEST(PagedKvCache, OutOfMemoryRefusesAndChangesNothing) {
  PagedKvCache kv = make_cache(8, 4);
  add_sequence(kv, 1, iota_tokens(20));  // 3 blocks: 8, 8, 4
  const std::string before = describe(kv);
  EXPECT_FALSE(kv.allocate(2, 9));  // needs 2 blocks, 1 left
  EXPECT_EQ(kv.length(2), 0);
  EXPECT_FALSE(kv.allocate(1, 13));  // 33 tokens need 5 blocks
  EXPECT_EQ(kv.length(1), 20);
  EXPECT_EQ(describe(kv), before);
  EXPECT_EQ(kv.stats().sequences, 1);
  ASSERT_TRUE(kv.allocate(1, 12));  // 32 tokens: exactly the budget
  EXPECT_EQ(kv.stats().blocks_free, 0);
  EXPECT_FALSE(kv.allocate(1, 1));
  std::vector<int32_t> grown = iota_tokens(20);
  grown.resize(32, 7);
  store_tokens(kv, 1, grown, 20, 32);
  EXPECT_TRUE(holds_tokens(kv, 1, grown));
}

TEST(PagedKvCache, CopyOnWriteNeedsAFreeBlockOrAllocateRefuses) {
  PagedKvCache kv = make_cache(8, 4);
  add_sequence(kv, 1, iota_tokens(20));  // 3 blocks, the last partly filled
  ASSERT_TRUE(kv.fork(1, 2));
  add_sequence(kv, 3, iota_tokens(8, 40));  // takes the last free block
  const std::string before = describe(kv);
  EXPECT_FALSE(kv.allocate(2, 1));  // writing into the shared tail needs a copy: no room
  EXPECT_EQ(describe(kv), before);
  kv.free(3);
  EXPECT_TRUE(kv.allocate(2, 1));
  EXPECT_EQ(kv.stats().blocks_used, 4);
}

// ---------------------------------------------------------------------------------------------
// Fork and copy-on-write

TEST(PagedKvCache, ForkSharesBlocksAndCopiesThePartlyFilledOneOnWrite) {
  PagedKvCache kv = make_cache(8, 8);
  const std::vector<int32_t> parent = iota_tokens(12);  // blocks: full, 4 of 8
  add_sequence(kv, 1, parent);
  ASSERT_TRUE(kv.fork(1, 2));
  EXPECT_EQ(table_of(kv, 2), table_of(kv, 1));
  EXPECT_EQ(kv.length(2), 12);
  EXPECT_EQ(kv.stats().blocks_used, 2);
  EXPECT_EQ(kv.stats().blocks_shared, 2);
  EXPECT_TRUE(holds_tokens(kv, 2, parent));

  // The child writes token 12 into the shared tail: it gets its own copy of that block.
  std::vector<int32_t> child = parent;
  child.push_back(33);
  ASSERT_TRUE(kv.allocate(2, 1, std::vector<int32_t>{33}));
  store_tokens(kv, 2, child, 12, 13);
  const std::vector<int32_t> t1 = table_of(kv, 1), t2 = table_of(kv, 2);
  EXPECT_EQ(t2[0], t1[0]);  // the full block stays shared
  EXPECT_NE(t2[1], t1[1]);
  EXPECT_EQ(kv.snapshot().blocks[t1[0]].ref_count, 2);
  EXPECT_EQ(kv.snapshot().blocks[t1[1]].ref_count, 1);
  EXPECT_TRUE(holds_tokens(kv, 2, child));   // copied slots 8..11 plus its new token
  EXPECT_TRUE(holds_tokens(kv, 1, parent));  // the parent's data unchanged

  // The parent's tail is now its own: it writes in place, and the child does not see it.
  std::vector<int32_t> parent_next = parent;
  parent_next.push_back(44);
  ASSERT_TRUE(kv.allocate(1, 1, std::vector<int32_t>{44}));
  store_tokens(kv, 1, parent_next, 12, 13);
  EXPECT_EQ(table_of(kv, 1), t1);
  EXPECT_TRUE(holds_tokens(kv, 1, parent_next));
  EXPECT_TRUE(holds_tokens(kv, 2, child));

  kv.free(1);
  EXPECT_EQ(kv.snapshot().blocks[t1[0]].ref_count, 1);
  EXPECT_TRUE(holds_tokens(kv, 2, child));
  EXPECT_THROW(kv.fork(2, 2), std::invalid_argument);  // the child must be new
  EXPECT_THROW(kv.fork(7, 8), std::out_of_range);       // the parent must exist
}

TEST(PagedKvCache, TruncatingIntoASharedFullBlockCopiesItOnTheNextWrite) {
  PagedKvCache kv = make_cache(8, 8);
  const std::vector<int32_t> parent = iota_tokens(16);
  add_sequence(kv, 1, parent);
  ASSERT_TRUE(kv.fork(1, 2));
  kv.truncate(2, 10);  // the child keeps both blocks, the second now only partly its own
  EXPECT_EQ(table_of(kv, 2), table_of(kv, 1));
  std::vector<int32_t> child(parent.begin(), parent.begin() + 10);
  child.push_back(59);
  ASSERT_TRUE(kv.allocate(2, 1, std::vector<int32_t>{59}));
  store_tokens(kv, 2, child, 10, 11);
  EXPECT_NE(table_of(kv, 2)[1], table_of(kv, 1)[1]);
  EXPECT_TRUE(holds_tokens(kv, 1, parent));
  EXPECT_TRUE(holds_tokens(kv, 2, child));
}

TEST(PagedKvCache, TruncateReleasesWholeBlocksPastTheNewLength) {
  PagedKvCache kv = make_cache(8, 4, /*prefix_cache=*/false);
  add_sequence(kv, 1, iota_tokens(20));
  kv.truncate(1, 16);
  EXPECT_EQ(kv.stats().blocks_used, 2);
  kv.truncate(1, 9);
  EXPECT_EQ(kv.stats().blocks_used, 2);
  kv.truncate(1, 8);
  EXPECT_EQ(kv.stats().blocks_used, 1);
  EXPECT_EQ(kv.length(1), 8);
  EXPECT_TRUE(holds_tokens(kv, 1, iota_tokens(8)));
  EXPECT_THROW(kv.truncate(1, 9), std::out_of_range);  // truncate never grows
  kv.truncate(1, 0);
  EXPECT_EQ(kv.stats().blocks_free, 4);
  EXPECT_EQ(kv.stats().sequences, 1);  // still known, empty
}

// ---------------------------------------------------------------------------------------------
// Prefix caching

TEST(PagedKvCache, PrefixHitsOnlyOnExactTokensAndCountsTokens) {
  PagedKvCache kv = make_cache(8, 16);
  const std::vector<int32_t> prompt = iota_tokens(25);  // 3 full blocks and 1 token
  add_sequence(kv, 1, prompt);
  kv.free(1);
  EXPECT_EQ(kv.stats().blocks_cached, 3);  // the partial tail is not cacheable

  std::vector<int32_t> changed = prompt;
  changed[10] = 63;  // one token different in block 2
  EXPECT_EQ(kv.attach_prefix(2, changed), 8);
  EXPECT_EQ(kv.length(2), 8);
  ASSERT_TRUE(kv.allocate(2, 17, std::span(changed).subspan(8)));
  store_tokens(kv, 2, changed, 8, 25);
  EXPECT_TRUE(holds_tokens(kv, 2, changed));

  EXPECT_EQ(kv.attach_prefix(3, prompt), 24);  // everything cached: 3 whole blocks
  ASSERT_TRUE(kv.allocate(3, 1, std::span(prompt).subspan(24)));
  store_tokens(kv, 3, prompt, 24, 25);
  EXPECT_TRUE(holds_tokens(kv, 3, prompt));

  const KvStats st = kv.stats();
  EXPECT_EQ(st.prefix_cache_queries, 50);  // tokens looked up
  EXPECT_EQ(st.prefix_cache_hits, 32);     // tokens found
  EXPECT_EQ(st.blocks_shared, 1);          // the first block is held by sequences 2 and 3
}

TEST(PagedKvCache, PartialBlocksNeverMatchAndOneTokenIsLeftToCompute) {
  PagedKvCache kv = make_cache(8, 16);
  const std::vector<int32_t> twelve = iota_tokens(12);
  add_sequence(kv, 1, twelve);
  kv.free(1);
  std::vector<int32_t> longer = iota_tokens(30);
  EXPECT_EQ(kv.attach_prefix(2, longer), 8);  // tokens 8..11 were in a partial block
  kv.free(2);

  const std::vector<int32_t> sixteen = iota_tokens(16);
  add_sequence(kv, 3, sixteen);
  kv.free(3);
  EXPECT_EQ(kv.attach_prefix(4, sixteen), 8);  // never the whole prompt
  EXPECT_EQ(kv.attach_prefix(5, iota_tokens(17)), 16);
  EXPECT_EQ(kv.attach_prefix(6, std::vector<int32_t>{}), 0);
  EXPECT_EQ(kv.length(6), 0);
  EXPECT_THROW(kv.attach_prefix(5, sixteen), std::logic_error);  // sequence 5 already holds tokens
}

TEST(PagedKvCache, BlocksInUseByAnotherSequenceAreShared) {
  PagedKvCache kv = make_cache(8, 8);
  const std::vector<int32_t> system = iota_tokens(16);
  std::vector<int32_t> a = system, b = system;
  a.insert(a.end(), {41, 42, 43});
  b.insert(b.end(), {51, 52});
  add_sequence(kv, 1, a);
  EXPECT_EQ(kv.attach_prefix(2, b), 16);
  ASSERT_TRUE(kv.allocate(2, 2, std::span(b).subspan(16)));
  store_tokens(kv, 2, b, 16, 18);
  const KvStats st = kv.stats();
  EXPECT_EQ(st.blocks_used, 4);
  EXPECT_EQ(st.blocks_shared, 2);
  EXPECT_EQ(st.bytes_saved_by_sharing, 2 * kv.block_bytes());
  EXPECT_TRUE(holds_tokens(kv, 1, a));
  EXPECT_TRUE(holds_tokens(kv, 2, b));
}

TEST(PagedKvCache, NoPrefixCachingMeansNoHashesNoHitsNoCachedBlocks) {
  PagedKvCache kv = make_cache(8, 8, /*prefix_cache=*/false);
  add_sequence(kv, 1, iota_tokens(20));
  for (const KvSnapshot::Block& b : kv.snapshot().blocks) EXPECT_EQ(b.hash, 0u);
  kv.free(1);
  EXPECT_EQ(kv.stats().blocks_cached, 0);
  EXPECT_EQ(kv.attach_prefix(2, iota_tokens(20)), 0);
  EXPECT_EQ(kv.stats().prefix_cache_queries, 0);
}

TEST(PagedKvCache, TokensAfterAGapAreNotHashed) {
  PagedKvCache kv = make_cache(8, 8);
  ASSERT_TRUE(kv.allocate(1, 8, iota_tokens(8)));
  ASSERT_TRUE(kv.allocate(1, 8));                  // ids unknown
  ASSERT_TRUE(kv.allocate(1, 8, iota_tokens(8)));  // cannot be identified after the gap
  const KvSnapshot snap = kv.snapshot();
  const std::vector<int32_t> t = snap.sequences[0].block_table;
  EXPECT_NE(snap.blocks[t[0]].hash, 0u);
  EXPECT_EQ(snap.blocks[t[1]].hash, 0u);
  EXPECT_EQ(snap.blocks[t[2]].hash, 0u);
  kv.free(1);
  EXPECT_EQ(kv.stats().blocks_cached, 1);
}

TEST(PagedKvCache, DiscardForgetsBlocksNobodyElseHolds) {
  PagedKvCache kv = make_cache(8, 8);
  const std::vector<int32_t> prompt = iota_tokens(17);
  add_sequence(kv, 1, prompt);
  EXPECT_EQ(kv.attach_prefix(2, prompt), 16);
  kv.discard(1);  // sequence 2 still holds (and vouches for) the two full blocks
  EXPECT_EQ(kv.stats().blocks_used, 2);
  kv.discard(2);
  EXPECT_EQ(kv.stats().blocks_cached, 0);
  EXPECT_EQ(kv.stats().blocks_free, 8);
  EXPECT_EQ(kv.attach_prefix(3, prompt), 0);
}

TEST(PagedKvCache, RewritingATruncatedBlockStopsItMatching) {
  PagedKvCache kv = make_cache(8, 8);
  const std::vector<int32_t> prompt = iota_tokens(17);
  add_sequence(kv, 1, prompt);
  kv.truncate(1, 12);
  std::vector<int32_t> now(prompt.begin(), prompt.begin() + 12);
  now.insert(now.end(), {61, 62});
  ASSERT_TRUE(kv.allocate(1, 2, std::vector<int32_t>{61, 62}));
  store_tokens(kv, 1, now, 12, 14);
  kv.free(1);
  EXPECT_EQ(kv.attach_prefix(2, prompt), 8);  // block 2 now holds other tokens past slot 4
  ASSERT_TRUE(kv.allocate(2, 9, std::span(prompt).subspan(8)));
  store_tokens(kv, 2, prompt, 8, 17);
  EXPECT_TRUE(holds_tokens(kv, 2, prompt));
}

// ---------------------------------------------------------------------------------------------
// Eviction

TEST(PagedKvCache, EvictsLeastRecentlyFreedCachedBlocksFirst) {
  PagedKvCache kv = make_cache(8, 4);
  const std::vector<int32_t> a = iota_tokens(9, 1), b = iota_tokens(9, 11), c = iota_tokens(9, 21);
  for (SeqId s : {1, 2, 3}) {
    const std::vector<int32_t>& p = s == 1 ? a : s == 2 ? b : c;
    ASSERT_TRUE(kv.allocate(s, 8, std::span(p).first(8)));
    store_tokens(kv, s, p, 0, 8);
  }
  kv.free(1);
  kv.free(3);
  kv.free(2);  // LRU order: a, c, b
  EXPECT_EQ(kv.stats().blocks_cached, 3);
  EXPECT_EQ(kv.stats().blocks_free, 1);

  ASSERT_TRUE(kv.allocate(9, 16));  // the free block, then a's (least recently used)
  EXPECT_EQ(kv.stats().evictions, 1);
  EXPECT_EQ(kv.attach_prefix(4, a), 0);  // evicted: no longer hits
  EXPECT_EQ(kv.attach_prefix(5, c), 8);  // still cached: reused
  std::vector<int32_t> c8(c.begin(), c.begin() + 8);
  EXPECT_TRUE(holds_tokens(kv, 5, c8));
  ASSERT_TRUE(kv.allocate(10, 1));  // evicts b, the only cached block left
  EXPECT_EQ(kv.stats().evictions, 2);
  EXPECT_EQ(kv.attach_prefix(6, b), 0);
  EXPECT_FALSE(kv.allocate(11, 1));  // every block in use: nothing to evict
}

TEST(PagedKvCache, ASequencesTailBlocksAreEvictedBeforeItsHead) {
  PagedKvCache kv = make_cache(8, 3);
  const std::vector<int32_t> prompt = iota_tokens(17);
  ASSERT_TRUE(kv.allocate(1, 16, std::span(prompt).first(16)));
  store_tokens(kv, 1, prompt, 0, 16);
  kv.free(1);
  ASSERT_TRUE(kv.allocate(2, 16));  // the free block and one eviction
  EXPECT_EQ(kv.stats().evictions, 1);
  EXPECT_EQ(kv.attach_prefix(3, prompt), 8);  // the first block survived
}

TEST(PagedKvCache, ReusedCachedBlockIsMostRecentlyUsedAgain) {
  PagedKvCache kv = make_cache(8, 3);
  const std::vector<int32_t> a = iota_tokens(9, 1), b = iota_tokens(9, 11);
  ASSERT_TRUE(kv.allocate(1, 8, std::span(a).first(8)));
  ASSERT_TRUE(kv.allocate(2, 8, std::span(b).first(8)));
  kv.free(1);
  kv.free(2);                            // LRU: a, b
  EXPECT_EQ(kv.attach_prefix(3, a), 8);  // a in use again
  kv.free(3);                            // LRU: b, a
  ASSERT_TRUE(kv.allocate(4, 16));       // the free block, then b
  EXPECT_EQ(kv.attach_prefix(5, a), 8);
  EXPECT_EQ(kv.attach_prefix(6, b), 0);
}

// ---------------------------------------------------------------------------------------------
// Stats and snapshot on a hand-computed example

TEST(PagedKvCache, StatsOnAHandComputedExample) {
  PagedKvCache kv = make_cache(8, 10);
  const size_t block = kv.block_bytes();
  EXPECT_EQ(block, 8u * 2 * sizeof(float) * kLayers * kHeads * kHeadDim);  // 1024
  add_sequence(kv, 1, iota_tokens(20));  // blocks 8, 8, 4
  ASSERT_TRUE(kv.fork(1, 2));            // shares all three
  ASSERT_TRUE(kv.allocate(3, 5));        // one block, no ids

  KvStats st = kv.stats();
  EXPECT_TRUE(st.paged);
  EXPECT_EQ(st.budget_bytes, 10 * block);
  EXPECT_EQ(st.sequences, 3);
  EXPECT_EQ(st.blocks_total, 10);
  EXPECT_EQ(st.blocks_used, 4);
  EXPECT_EQ(st.blocks_cached, 0);
  EXPECT_EQ(st.blocks_free, 6);
  EXPECT_EQ(st.used_bytes, 4 * block);
  EXPECT_EQ(st.allocated_tokens, 32u);
  EXPECT_EQ(st.filled_tokens, 25u);  // 8 + 8 + 4 (shared, once) + 5
  EXPECT_EQ(st.blocks_shared, 3);
  EXPECT_EQ(st.bytes_saved_by_sharing, 3 * block);
  EXPECT_DOUBLE_EQ(st.kv_cache_usage_perc(), 0.4);
  EXPECT_DOUBLE_EQ(st.kv_internal_fragmentation_perc(), 7.0 / 32.0);  // (8-4) + (8-5) unfilled of 32
  EXPECT_DOUBLE_EQ(st.kv_reserved_unused_perc(), 0.0);

  ASSERT_TRUE(kv.allocate(2, 1));  // copy-on-write of the shared tail
  st = kv.stats();
  EXPECT_EQ(st.blocks_used, 5);
  EXPECT_EQ(st.filled_tokens, 30u);  // 8 + 8 + 4 + 5 + 5
  EXPECT_EQ(st.blocks_shared, 2);
  EXPECT_EQ(st.bytes_saved_by_sharing, 2 * block);
  EXPECT_DOUBLE_EQ(st.kv_internal_fragmentation_perc(), 10.0 / 40.0);

  kv.free(1);  // its tail (partial) is freed; the full blocks are still sequence 2's
  kv.free(2);  // its two full, hashed blocks are cached, its partial tail freed
  st = kv.stats();
  EXPECT_EQ(st.blocks_used, 1);
  EXPECT_EQ(st.blocks_cached, 2);
  EXPECT_EQ(st.blocks_free, 7);
  EXPECT_EQ(st.filled_tokens, 5u);
  EXPECT_EQ(st.sequences, 1);

  EXPECT_EQ(kv.attach_prefix(4, iota_tokens(20)), 16);
  st = kv.stats();
  EXPECT_EQ(st.prefix_cache_queries, 20);
  EXPECT_EQ(st.prefix_cache_hits, 16);
  EXPECT_EQ(st.blocks_used, 3);
  EXPECT_EQ(st.blocks_cached, 0);
  EXPECT_EQ(st.evictions, 0);
}

TEST(PagedKvCache, SnapshotShowsOwnersFillCacheStateAndTables) {
  PagedKvCache kv = make_cache(8, 6);
  add_sequence(kv, 1, iota_tokens(12));
  ASSERT_TRUE(kv.fork(1, 2));
  add_sequence(kv, 5, iota_tokens(9, 30));
  kv.free(5);  // one cached block, one freed tail
  const KvSnapshot snap = kv.snapshot();
  EXPECT_EQ(snap.kind, "paged");
  EXPECT_EQ(snap.block_size, 8);
  ASSERT_EQ(snap.blocks.size(), 6u);
  ASSERT_EQ(snap.sequences.size(), 2u);
  EXPECT_EQ(snap.sequences[0].id, 1);
  EXPECT_EQ(snap.sequences[0].length, 12);
  const std::vector<int32_t> t = snap.sequences[0].block_table;
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(snap.sequences[1].block_table, t);
  const KvSnapshot::Block& full = snap.blocks[t[0]];
  EXPECT_EQ(full.owners, (std::vector<SeqId>{1, 2}));
  EXPECT_EQ(full.ref_count, 2);
  EXPECT_EQ(full.filled, 8);
  EXPECT_NE(full.hash, 0u);
  EXPECT_FALSE(full.cached);
  const KvSnapshot::Block& tail = snap.blocks[t[1]];
  EXPECT_EQ(tail.filled, 4);
  EXPECT_EQ(tail.hash, 0u);
  int32_t cached = 0, free_blocks = 0;
  for (const KvSnapshot::Block& b : snap.blocks) {
    if (b.cached) {
      ++cached;
      EXPECT_TRUE(b.owners.empty());
      EXPECT_EQ(b.ref_count, 0);
      EXPECT_EQ(b.filled, 8);
      EXPECT_NE(b.hash, 0u);
    } else if (b.ref_count == 0) {
      ++free_blocks;
      EXPECT_EQ(b.filled, 0);
      EXPECT_EQ(b.hash, 0u);
    }
  }
  EXPECT_EQ(cached, 1);
  EXPECT_EQ(free_blocks, 3);
}

// ---------------------------------------------------------------------------------------------
// Random operations against a simple model

// The model: each live sequence's token ids. Checks every block-pool invariant against it.
void check_invariants(const PagedKvCache& kv, const std::map<SeqId, std::vector<int32_t>>& model) {
  const int32_t bs = kv.block_size();
  const KvSnapshot snap = kv.snapshot();
  const KvStats st = kv.stats();
  const size_t n = static_cast<size_t>(kv.total_blocks());
  ASSERT_EQ(snap.blocks.size(), n);
  ASSERT_EQ(snap.sequences.size(), model.size());
  std::vector<std::vector<SeqId>> owners(n);
  std::vector<int32_t> fill(n, 0);
  for (const KvSnapshot::Sequence& s : snap.sequences) {
    auto it = model.find(s.id);
    ASSERT_NE(it, model.end()) << "unexpected sequence " << s.id;
    ASSERT_EQ(s.length, static_cast<int32_t>(it->second.size())) << "sequence " << s.id;
    ASSERT_EQ(s.block_table.size(), static_cast<size_t>((s.length + bs - 1) / bs)) << "sequence " << s.id;
    ASSERT_EQ(std::set<int32_t>(s.block_table.begin(), s.block_table.end()).size(), s.block_table.size())
        << "a block twice in sequence " << s.id;
    for (size_t i = 0; i < s.block_table.size(); ++i) {
      const int32_t b = s.block_table[i];
      owners[b].push_back(s.id);
      fill[b] = std::max(fill[b], std::min(bs, s.length - static_cast<int32_t>(i) * bs));
    }
  }
  int32_t used = 0, cached = 0, free_blocks = 0, shared = 0;
  size_t filled = 0, saved = 0;
  for (size_t b = 0; b < n; ++b) {
    const KvSnapshot::Block& blk = snap.blocks[b];
    ASSERT_EQ(blk.owners, owners[b]) << "block " << b;
    ASSERT_EQ(blk.ref_count, static_cast<int32_t>(owners[b].size())) << "block " << b;
    if (blk.ref_count > 0) {
      ++used;
      ASSERT_FALSE(blk.cached) << "block " << b;
      ASSERT_EQ(blk.filled, fill[b]) << "block " << b;
      filled += fill[b];
      shared += blk.ref_count > 1;
      saved += static_cast<size_t>(blk.ref_count - 1) * kv.block_bytes();
    } else if (blk.cached) {
      ++cached;
      ASSERT_NE(blk.hash, 0u) << "cached block " << b << " has no hash";
      ASSERT_EQ(blk.filled, bs);
    } else {
      ++free_blocks;
      ASSERT_EQ(blk.hash, 0u) << "free block " << b << " still findable";
      ASSERT_EQ(blk.filled, 0);
    }
  }
  ASSERT_EQ(used + cached + free_blocks, kv.total_blocks());
  ASSERT_EQ(st.blocks_used, used);
  ASSERT_EQ(st.blocks_cached, cached);
  ASSERT_EQ(st.blocks_free, free_blocks);
  ASSERT_EQ(st.blocks_shared, shared);
  ASSERT_EQ(st.filled_tokens, filled);
  ASSERT_EQ(st.bytes_saved_by_sharing, saved);
  ASSERT_EQ(st.allocated_tokens, static_cast<size_t>(used) * bs);
  ASSERT_EQ(st.sequences, static_cast<int32_t>(model.size()));
}

class PagedKvRandom : public ::testing::TestWithParam<int32_t> {};

TEST_P(PagedKvRandom, InvariantsAndContentsHoldUnderRandomOperations) {
  const int32_t bs = GetParam();
  PagedKvCache kv = make_cache(bs, 40);
  std::mt19937 rng(1234 + bs);
  auto uniform = [&](int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); };
  auto small_tokens = [&](int32_t n) {
    std::vector<int32_t> t(n);
    for (int32_t& x : t) x = uniform(1, 6);  // a small alphabet, so prompts often agree
    return t;
  };
  // Three shared prompt heads of three blocks each (system prompts, chat history).
  const std::vector<std::vector<int32_t>> heads = {small_tokens(3 * bs), small_tokens(3 * bs), small_tokens(3 * bs)};
  constexpr int32_t kMaxLen = 200;  // kv_value needs positions below 256

  std::map<SeqId, std::vector<int32_t>> model;
  SeqId next_id = 0;
  int64_t queries = 0, hits = 0;
  int32_t refusals = 0, most_shared = 0;
  auto random_seq = [&] {
    auto it = model.begin();
    std::advance(it, uniform(0, static_cast<int32_t>(model.size()) - 1));
    return it->first;
  };

  for (int32_t op = 0; op < 3000; ++op) {
    const int32_t choice = uniform(0, 99);
    if (choice < 25 || model.empty()) {
      // A new request: a shared head (some prefix of it) then its own tokens.
      std::vector<int32_t> prompt = heads[uniform(0, 2)];
      prompt.resize(uniform(0, 3 * bs));
      const std::vector<int32_t> tail = small_tokens(uniform(1, 2 * bs));
      prompt.insert(prompt.end(), tail.begin(), tail.end());
      const SeqId seq = next_id++;
      int32_t attached = 0;
      if (uniform(0, 3) > 0) {
        attached = kv.attach_prefix(seq, prompt);
        queries += static_cast<int64_t>(prompt.size());
        hits += attached;
        ASSERT_LT(attached, static_cast<int32_t>(prompt.size()));
        ASSERT_EQ(attached % bs, 0);
        if (attached > 0) model[seq] = std::vector<int32_t>(prompt.begin(), prompt.begin() + attached);
      }
      const std::string before = describe(kv);
      const std::span<const int32_t> rest = std::span<const int32_t>(prompt).subspan(attached);
      if (kv.allocate(seq, static_cast<int32_t>(rest.size()), rest)) {
        model[seq] = prompt;
        store_tokens(kv, seq, prompt, attached, prompt.size());
      } else {
        ++refusals;
        ASSERT_EQ(describe(kv), before) << "a refused allocate changed the cache";
        kv.free(seq);  // the scheduler gives up on it for now
        model.erase(seq);
      }
    } else if (choice < 50) {
      // A decode or prefill chunk.
      const SeqId seq = random_seq();
      std::vector<int32_t>& tokens = model[seq];
      const int32_t n = uniform(1, bs + 3);
      if (static_cast<int32_t>(tokens.size()) + n > kMaxLen) continue;
      const std::vector<int32_t> add = small_tokens(n);
      const std::string before = describe(kv);
      if (kv.allocate(seq, n, add)) {
        const size_t from = tokens.size();
        tokens.insert(tokens.end(), add.begin(), add.end());
        store_tokens(kv, seq, tokens, from, tokens.size());
      } else {
        ++refusals;
        ASSERT_EQ(describe(kv), before) << "a refused allocate changed the cache";
      }
    } else if (choice < 62) {
      const SeqId seq = random_seq();
      kv.free(seq);
      model.erase(seq);
    } else if (choice < 67) {
      const SeqId seq = random_seq();
      kv.discard(seq);
      model.erase(seq);
    } else if (choice < 80) {
      const SeqId parent = random_seq();
      const SeqId child = next_id++;
      ASSERT_TRUE(kv.fork(parent, child));
      model[child] = model[parent];
    } else {
      const SeqId seq = random_seq();
      std::vector<int32_t>& tokens = model[seq];
      tokens.resize(uniform(0, static_cast<int32_t>(tokens.size())));
      kv.truncate(seq, static_cast<int32_t>(tokens.size()));
    }
    ASSERT_NO_FATAL_FAILURE(check_invariants(kv, model)) << "after operation " << op;
    most_shared = std::max(most_shared, kv.stats().blocks_shared);
    if (op % 20 == 0) {
      for (const auto& [seq, tokens] : model) ASSERT_TRUE(holds_tokens(kv, seq, tokens)) << "after operation " << op;
    }
  }
  for (const auto& [seq, tokens] : model) EXPECT_TRUE(holds_tokens(kv, seq, tokens));
  const KvStats st = kv.stats();
  EXPECT_EQ(st.prefix_cache_queries, queries);
  EXPECT_EQ(st.prefix_cache_hits, hits);
  // The run exercised what it claims to: hits, evictions, refusals and sharing all happened.
  EXPECT_GT(hits, 0);
  EXPECT_GT(st.evictions, 0);
  EXPECT_GT(refusals, 0);
  EXPECT_GT(most_shared, 1);
  // Freeing everything returns every block: nothing leaks.
  for (const auto& [seq, tokens] : model) kv.free(seq);
  EXPECT_EQ(kv.stats().blocks_used, 0);
  EXPECT_EQ(kv.stats().blocks_free + kv.stats().blocks_cached, kv.total_blocks());
}

INSTANTIATE_TEST_SUITE_P(BlockSizes, PagedKvRandom, ::testing::Values(8, 16, 32),
                         [](const auto& param_info) { return "block" + std::to_string(param_info.param); });

}  // namespace
}  // namespace inferscope
