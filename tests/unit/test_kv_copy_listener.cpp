// The hook a device mirror of the KV storage relies on: every copy a cache makes inside its own
// storage (paged copy-on-write, contiguous fork) is reported with addresses inside its regions, and
// replaying the reports on a copy of the regions (KvRegionMap) reproduces the cache's bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "core/kv/contiguous_kv_cache.h"
#include "core/kv/kv_region_map.h"
#include "core/kv/paged_kv_cache.h"

namespace inferscope {
namespace {

const KvGeometry kGeometry{2, 2, 8, DType::F32};

// Mirrors a cache's regions in plain host memory, replaying each reported copy there.
class Mirror final : public KvCopyListener {
 public:
  explicit Mirror(const KvCache& kv) {
    std::vector<uint8_t*> to;
    for (const KvRegion& r : kv.storage_regions()) {
      copies_.emplace_back(r.bytes, 0);
      to.push_back(copies_.back().data());
    }
    map_ = std::make_unique<KvRegionMap>(kv.storage_regions(), to);
  }
  void copied(const uint8_t* src, const uint8_t* dst, size_t bytes) override {
    ++reports;
    std::memcpy(map_->map(dst), map_->map(src), bytes);
  }
  uint8_t* map(const uint8_t* host) const { return map_->map(host); }
  int reports = 0;

 private:
  std::vector<std::vector<uint8_t>> copies_;
  std::unique_ptr<KvRegionMap> map_;
};

// Stores token `pos` of `seq` in every layer, in the cache and by hand in the mirror (as a device
// forward pass writes its own K/V).
void store(KvCache& kv, Mirror& mirror, SeqId seq, int32_t pos) {
  std::vector<float> k(16), v(16);
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = static_cast<float>(seq * 1000 + pos * 10) + static_cast<float>(i);
    v[i] = -k[i];
  }
  for (int32_t l = 0; l < kGeometry.n_layers; ++l) {
    kv.store(l, seq, pos, k.data(), v.data());
    const KvView view = kv.view(l, seq);
    for (int32_t h = 0; h < kGeometry.n_kv_heads; ++h) {
      std::memcpy(mirror.map(view.key(pos, h, 8)), view.key(pos, h, 8), 8 * sizeof(float));
      std::memcpy(mirror.map(view.value(pos, h, 8)), view.value(pos, h, 8), 8 * sizeof(float));
    }
  }
}

// Every stored row of `seq` reads the same in the cache and in the mirror.
void expect_mirrored(const KvCache& kv, const Mirror& mirror, SeqId seq) {
  for (int32_t l = 0; l < kGeometry.n_layers; ++l) {
    const KvView view = kv.view(l, seq);
    for (int32_t t = 0; t < view.length; ++t) {
      for (int32_t h = 0; h < kGeometry.n_kv_heads; ++h) {
        EXPECT_EQ(std::memcmp(mirror.map(view.key(t, h, 8)), view.key(t, h, 8), 8 * sizeof(float)), 0)
            << "K layer " << l << " token " << t;
        EXPECT_EQ(std::memcmp(mirror.map(view.value(t, h, 8)), view.value(t, h, 8), 8 * sizeof(float)), 0)
            << "V layer " << l << " token " << t;
      }
    }
  }
}

TEST(KvCopyListener, PagedCopyOnWriteIsReportedAndReplays) {
  PagedKvCache kv(kGeometry, 8, 16 * 8 * kGeometry.bytes_per_token(), false);
  auto mirror = std::make_shared<Mirror>(kv);
  kv.set_copy_listener(mirror);
  ASSERT_TRUE(kv.allocate(1, 5));
  for (int32_t p = 0; p < 5; ++p) store(kv, *mirror, 1, p);
  ASSERT_TRUE(kv.fork(1, 2));
  EXPECT_EQ(mirror->reports, 0);  // sharing copies nothing
  // the child's next token goes into the shared, partly filled tail: copied in each layer, K and V
  ASSERT_TRUE(kv.allocate(2, 1));
  EXPECT_EQ(mirror->reports, 2 * kGeometry.n_layers);
  store(kv, *mirror, 2, 5);
  expect_mirrored(kv, *mirror, 1);
  expect_mirrored(kv, *mirror, 2);
}

TEST(KvCopyListener, ContiguousForkIsReportedAndReplays) {
  ContiguousKvCache kv(kGeometry, 16, 3 * 16 * kGeometry.bytes_per_token());
  auto mirror = std::make_shared<Mirror>(kv);
  kv.set_copy_listener(mirror);
  ASSERT_TRUE(kv.allocate(1, 4));
  for (int32_t p = 0; p < 4; ++p) store(kv, *mirror, 1, p);
  ASSERT_TRUE(kv.fork(1, 2));
  EXPECT_EQ(mirror->reports, 2 * kGeometry.n_layers * kGeometry.n_kv_heads);  // per layer, K and V, per head
  expect_mirrored(kv, *mirror, 2);
}

TEST(KvCopyListener, AnExpiredListenerHearsNothing) {
  PagedKvCache kv(kGeometry, 8, 16 * 8 * kGeometry.bytes_per_token(), false);
  kv.set_copy_listener(std::make_shared<Mirror>(kv));  // gone at once
  ASSERT_TRUE(kv.allocate(1, 3));
  ASSERT_TRUE(kv.fork(1, 2));
  EXPECT_TRUE(kv.allocate(2, 1));  // copies without a listener, without a crash
}

TEST(KvRegionMap, MapsByOffsetAndRefusesOutsideAddresses) {
  std::vector<uint8_t> a(64), b(32), copy_a(64), copy_b(32);
  const KvRegionMap map({{a.data(), a.size()}, {b.data(), b.size()}}, {copy_a.data(), copy_b.data()});
  EXPECT_EQ(map.map(a.data() + 10), copy_a.data() + 10);
  EXPECT_EQ(map.map(b.data() + 31), copy_b.data() + 31);
  EXPECT_THROW(map.map(copy_a.data()), std::out_of_range);
}

// Two regions back to back (an allocator may place a layer's V pool right after its K pool): the
// address where the first ends and the second starts is the second's first byte (seen under TSan,
// whose allocator did that, as V rows read from the K copy's end).
TEST(KvRegionMap, AnAddressWhereOneRegionEndsAndTheNextStartsIsTheNexts) {
  std::vector<uint8_t> storage(96), copy_k(64), copy_v(32);
  const KvRegionMap map({{storage.data(), 64}, {storage.data() + 64, 32}}, {copy_k.data(), copy_v.data()});
  EXPECT_EQ(map.map(storage.data() + 64), copy_v.data());
  EXPECT_EQ(map.map(storage.data() + 63), copy_k.data() + 63);
  EXPECT_EQ(map.map(storage.data() + 96), copy_v.data() + 32);  // one past the last region's end
}

}  // namespace
}  // namespace inferscope
