// ContiguousKvCache: one max_seq_len region per sequence, carved from a fixed budget.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/kv/contiguous_kv_cache.h"
#include "core/kv/kv_dtype.h"
#include "kernels/cpu/quantize.h"
#include "tests/support/kv_store_bound.h"

namespace inferscope {
namespace {

constexpr int32_t kMaxSeqLen = 16;

KvGeometry geometry(DType dtype) { return KvGeometry{3, 2, 32, dtype}; }  // 3 layers, 2 kv heads of 32

// A budget of `regions` whole regions plus `extra` bytes that cannot make another one.
ContiguousKvCache make_cache(DType dtype, size_t regions, size_t extra = 0) {
  const size_t region = geometry(dtype).bytes_per_token() * kMaxSeqLen;
  return ContiguousKvCache(geometry(dtype), kMaxSeqLen, region * regions + extra);
}

TEST(KvGeometry, BytesPerTokenIsTwoTimesRowBytesLayersHeads) {
  EXPECT_EQ(geometry(DType::F32).row_bytes(), 4u * 32);
  EXPECT_EQ(geometry(DType::F16).row_bytes(), 2u * 32);
  EXPECT_EQ(geometry(DType::Q8_0).row_bytes(), 34u);  // one Q8_0 block: 32 int8 and an f16 scale
  EXPECT_EQ(geometry(DType::F32).bytes_per_token(), 2u * 4 * 32 * 3 * 2);
  EXPECT_EQ(geometry(DType::F16).bytes_per_token(), 2u * 2 * 32 * 3 * 2);
  EXPECT_EQ(geometry(DType::Q8_0).bytes_per_token(), 2u * 34 * 3 * 2);
  // SmolLM2-135M: 30 layers, 3 kv heads of 64
  EXPECT_EQ((KvGeometry{30, 3, 64, DType::F32}.bytes_per_token()), 2u * 4 * 64 * 30 * 3);
  EXPECT_EQ((KvGeometry{30, 3, 64, DType::F16}.bytes_per_token()), 2u * 2 * 64 * 30 * 3);
  EXPECT_EQ((KvGeometry{30, 3, 64, DType::Q8_0}.bytes_per_token()), 2u * 68 * 30 * 3);  // 12240: 53% of f16
}

// The message a user of --kv-dtype sees, from the geometry and from either cache.
std::string refusal(const KvGeometry& g) {
  try {
    ContiguousKvCache(g, kMaxSeqLen, size_t{1} << 20);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

TEST(KvGeometry, Q8NeedsAHeadDimThatIsAMultipleOf32) {
  const KvGeometry stories{5, 4, 8, DType::Q8_0};  // stories260K's head_dim
  const std::string want = "--kv-dtype q8 needs a head dimension that is a multiple of 32 (this model: 8)";
  EXPECT_EQ(refusal(stories), want);
  try {
    (void)stories.bytes_per_token();
    ADD_FAILURE() << "bytes_per_token accepted head_dim 8 in q8";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), want);
  }
  EXPECT_EQ(refusal(KvGeometry{1, 1, 48, DType::Q8_0}),
            "--kv-dtype q8 needs a head dimension that is a multiple of 32 (this model: 48)");
  EXPECT_EQ(refusal(KvGeometry{1, 1, 8, DType::Q4_0}), "KV cache dtype must be f32, f16 or q8, not q4_0");
  EXPECT_EQ(refusal(KvGeometry{5, 4, 8, DType::F16}), "accepted");  // f16 and f32 take any head_dim
}

TEST(KvDtype, NamesRoundTrip) {
  ASSERT_EQ(kv_dtype_names(), (std::vector<std::string>{"f32", "f16", "q8"}));
  for (const std::string& name : kv_dtype_names()) EXPECT_EQ(kv_dtype_name(*kv_dtype_from_name(name)), name);
  EXPECT_EQ(kv_dtype_from_name("q8"), DType::Q8_0);
  EXPECT_FALSE(kv_dtype_from_name("q8_0"));
  EXPECT_FALSE(kv_dtype_from_name("F16"));
  EXPECT_THROW(kv_dtype_name(DType::BF16), std::invalid_argument);
}

TEST(ContiguousKvCache, RegionIsMaxSeqLenTokens) {
  const ContiguousKvCache kv = make_cache(DType::F16, 1);
  EXPECT_EQ(kv.region_bytes(), geometry(DType::F16).bytes_per_token() * kMaxSeqLen);
  EXPECT_EQ(kv.max_seq_len(), kMaxSeqLen);
  EXPECT_EQ(kv.name(), "contiguous");
}

TEST(ContiguousKvCache, AllocateGrowsAndFreeForgets) {
  ContiguousKvCache kv = make_cache(DType::F16, 2);
  EXPECT_EQ(kv.length(7), 0);  // unknown sequence
  ASSERT_TRUE(kv.allocate(7, 5));
  EXPECT_EQ(kv.length(7), 5);
  ASSERT_TRUE(kv.allocate(7, 3));
  EXPECT_EQ(kv.length(7), 8);
  ASSERT_TRUE(kv.allocate(7, 8));  // exactly max_seq_len
  EXPECT_EQ(kv.length(7), kMaxSeqLen);
  kv.free(7);
  EXPECT_EQ(kv.length(7), 0);
  kv.free(7);   // freeing twice, or an unknown sequence, is a no-op
  kv.free(99);
  EXPECT_EQ(kv.stats().sequences, 0);
  ASSERT_TRUE(kv.allocate(7, 2));  // a freed id starts over, empty
  EXPECT_EQ(kv.length(7), 2);
}

TEST(ContiguousKvCache, BudgetHoldsExactlyFloorOfBudgetOverRegion) {
  const size_t region = geometry(DType::F16).bytes_per_token() * kMaxSeqLen;
  ContiguousKvCache kv = make_cache(DType::F16, 3, region - 1);  // 3.99 regions
  EXPECT_EQ(kv.regions(), 3);
  EXPECT_EQ(kv.stats().budget_bytes, 3 * region);
  for (SeqId s = 0; s < 3; ++s) ASSERT_TRUE(kv.allocate(s, 1)) << "sequence " << s;
  EXPECT_FALSE(kv.allocate(3, 1));  // a fourth does not fit
  EXPECT_EQ(kv.length(3), 0);
  EXPECT_EQ(kv.stats().sequences, 3);
  kv.free(1);
  EXPECT_TRUE(kv.allocate(3, 1));  // its region is reused
  EXPECT_EQ(kv.stats().sequences, 3);
}

TEST(ContiguousKvCache, BudgetBelowOneRegionThrows) {
  const size_t region = geometry(DType::F32).bytes_per_token() * kMaxSeqLen;
  EXPECT_THROW(ContiguousKvCache(geometry(DType::F32), kMaxSeqLen, region - 1), std::invalid_argument);
  EXPECT_THROW(ContiguousKvCache(geometry(DType::F32), 0, region), std::invalid_argument);
}

// A geometry without layers or KV heads makes a zero-byte region: refused, not divided by.
TEST(ContiguousKvCache, EmptyGeometryThrows) {
  for (const KvGeometry& g : {KvGeometry{0, 2, 32, DType::F32}, KvGeometry{3, 0, 32, DType::F32},
                              KvGeometry{-1, 2, 32, DType::F32}}) {
    try {
      ContiguousKvCache kv(g, kMaxSeqLen, size_t{1} << 20);
      ADD_FAILURE() << "built a cache of " << g.n_layers << " layers and " << g.n_kv_heads << " KV heads";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("must be positive"), std::string::npos) << e.what();
    }
  }
}

TEST(ContiguousKvCache, AllocatePastMaxSeqLenFailsAndChangesNothing) {
  ContiguousKvCache kv = make_cache(DType::F16, 1);
  EXPECT_FALSE(kv.allocate(1, kMaxSeqLen + 1));  // a new sequence too long for any region
  EXPECT_EQ(kv.length(1), 0);
  EXPECT_EQ(kv.stats().sequences, 0);
  ASSERT_TRUE(kv.allocate(2, 10));  // the only region is still free
  EXPECT_FALSE(kv.allocate(2, kMaxSeqLen - 10 + 1));  // growing past the region
  EXPECT_EQ(kv.length(2), 10);
  EXPECT_EQ(kv.stats().filled_tokens, 10u);
  EXPECT_TRUE(kv.allocate(2, kMaxSeqLen - 10));
  EXPECT_EQ(kv.length(2), kMaxSeqLen);
}

TEST(ContiguousKvCache, StatsCountWholeRegions) {
  ContiguousKvCache kv = make_cache(DType::F16, 4);
  const KvStats empty = kv.stats();
  EXPECT_EQ(empty.used_bytes, 0u);
  EXPECT_EQ(empty.filled_tokens, 0u);
  EXPECT_EQ(empty.allocated_tokens, 0u);
  ASSERT_TRUE(kv.allocate(1, 3));
  ASSERT_TRUE(kv.allocate(2, 9));
  const KvStats s = kv.stats();
  EXPECT_EQ(s.sequences, 2);
  EXPECT_EQ(s.filled_tokens, 12u);
  EXPECT_EQ(s.allocated_tokens, 2u * kMaxSeqLen);  // a region is reserved whole, however little is used
  EXPECT_EQ(s.used_bytes, 2 * kv.region_bytes());
  EXPECT_EQ(s.budget_bytes, 4 * kv.region_bytes());
}

// Fills every (layer, sequence, position) with distinct random K/V, then reads all of it back
// through view(), so any overlap between layers, sequences, heads or K and V shows.
class StoreViewTest : public ::testing::TestWithParam<DType> {
 protected:
  static constexpr int kSeqs = 3;
  static constexpr int32_t kLengths[kSeqs] = {5, kMaxSeqLen, 1};

  void SetUp() override {
    const KvGeometry g = geometry(GetParam());
    row_ = g.n_kv_heads * g.head_dim;
    for (int32_t n : kLengths) tokens_ += n;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    values_.resize(static_cast<size_t>(g.n_layers) * tokens_ * 2 * row_);
    for (float& x : values_) x = dist(rng);
    // outliers, 30x the rest, in most q8 blocks: the block scale follows them
    for (size_t i = 0; i < values_.size(); i += 37) values_[i] *= 30.0f;
  }
  // The K (then V) floats written for (layer, seq, pos): layers, then sequences, then positions.
  const float* written(int32_t layer, int seq, int32_t pos) const {
    int32_t before = 0;
    for (int s = 0; s < seq; ++s) before += kLengths[s];
    return values_.data() + (static_cast<size_t>(layer) * tokens_ + before + pos) * 2 * row_;
  }
  int32_t tokens_ = 0;  // summed over the sequences
  int row_ = 0;
  std::vector<float> values_;
};

TEST_P(StoreViewTest, ViewReadsBackWhatWasStored) {
  const DType dtype = GetParam();
  const KvGeometry g = geometry(dtype);
  ContiguousKvCache kv = make_cache(dtype, kSeqs);
  for (int s = 0; s < kSeqs; ++s) ASSERT_TRUE(kv.allocate(s, kLengths[s]));
  for (int32_t l = 0; l < g.n_layers; ++l) {
    for (int s = 0; s < kSeqs; ++s) {
      for (int32_t p = 0; p < kLengths[s]; ++p) kv.store(l, s, p, written(l, s, p), written(l, s, p) + row_);
    }
  }
  std::vector<float> got(static_cast<size_t>(g.head_dim));
  for (int32_t l = 0; l < g.n_layers; ++l) {
    for (int s = 0; s < kSeqs; ++s) {
      const KvView view = kv.view(l, s);
      EXPECT_EQ(view.length, kLengths[s]);
      EXPECT_EQ(view.dtype, dtype);
      for (int32_t p = 0; p < kLengths[s]; ++p) {
        for (int32_t h = 0; h < g.n_kv_heads; ++h) {
          for (bool is_v : {false, true}) {
            const float* want = written(l, s, p) + (is_v ? row_ : 0) + h * g.head_dim;
            dequantize_row(dtype, is_v ? view.value(p, h, g.head_dim) : view.key(p, h, g.head_dim), got.data(),
                           g.head_dim);
            for (int32_t d = 0; d < g.head_dim; ++d) {
              ASSERT_LE(std::abs(got[d] - want[d]), test::kv_store_bound(dtype, want, d))
                  << "layer " << l << " seq " << s << " pos " << p << " head " << h << (is_v ? " V" : " K") << " dim " << d;
            }
          }
        }
      }
    }
  }
}

TEST_P(StoreViewTest, StorePastTheAllocatedLengthThrows) {
  ContiguousKvCache kv = make_cache(GetParam(), 1);
  ASSERT_TRUE(kv.allocate(0, 2));
  const std::vector<float> k(static_cast<size_t>(row_), 1.0f), v(static_cast<size_t>(row_), 2.0f);
  EXPECT_THROW(kv.store(0, 0, 2, k.data(), v.data()), std::out_of_range);
  EXPECT_THROW(kv.store(0, 0, -1, k.data(), v.data()), std::out_of_range);
}

// A layer outside 0..n_layers-1 is refused by name, never written or read out of the storage.
TEST_P(StoreViewTest, LayerOutsideTheModelThrows) {
  ContiguousKvCache kv = make_cache(GetParam(), 1);
  ASSERT_TRUE(kv.allocate(0, 2));
  const std::vector<float> k(static_cast<size_t>(row_), 1.0f), v(static_cast<size_t>(row_), 2.0f);
  const int32_t n_layers = geometry(GetParam()).n_layers;
  for (int32_t layer : {n_layers, -1, 1000}) {
    try {
      kv.store(layer, 0, 0, k.data(), v.data());
      ADD_FAILURE() << "stored into layer " << layer;
    } catch (const std::out_of_range& e) {
      EXPECT_EQ(std::string(e.what()), "contiguous KV cache: no layer " + std::to_string(layer) + " (the model has 3)");
    }
    EXPECT_THROW(kv.view(layer, 0), std::out_of_range) << layer;
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, StoreViewTest, ::testing::Values(DType::F32, DType::F16, DType::Q8_0),
                         [](const ::testing::TestParamInfo<DType>& param) { return std::string(dtype_name(param.param)); });

}  // namespace
}  // namespace inferscope
