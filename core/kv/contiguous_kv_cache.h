// The traditional KV cache: each sequence reserves one region for max_seq_len tokens when it is
// admitted, whatever it will use. Regions are carved from a fixed budget.
#pragma once
#include <map>
#include <memory>

#include "core/kv/kv_cache.h"

namespace inferscope {

class ContiguousKvCache final : public KvCache {
 public:
  // budget_bytes: memory for all regions (at least one region); max_seq_len: tokens per region.
  ContiguousKvCache(KvGeometry geometry, int32_t max_seq_len, size_t budget_bytes);

  std::string name() const override { return "contiguous"; }
  bool allocate(SeqId seq, int32_t n_new, std::span<const int32_t> tokens = {}) override;
  void free(SeqId seq) override;
  bool fork(SeqId parent, SeqId child) override;
  void truncate(SeqId seq, int32_t length) override;
  int32_t length(SeqId seq) const override;
  void store(int32_t layer, SeqId seq, int32_t pos, const float* k, const float* v) override;
  KvView view(int32_t layer, SeqId seq) const override;
  KvStats stats() const override;
  KvSnapshot snapshot() const override;
  std::vector<KvRegion> storage_regions() const override;

  int32_t max_seq_len() const { return max_seq_len_; }
  int32_t regions() const { return static_cast<int32_t>(region_free_.size()); }
  size_t region_bytes() const { return region_bytes_per_layer_ * 2 * geometry_.n_layers; }

 private:
  struct Sequence {
    int32_t region = 0;  // this sequence's block table: one entry
    int32_t length = 0;
  };
  // Takes the lowest free region, or -1 when none is left.
  int32_t take_region();
  int32_t max_seq_len_;
  size_t head_stride_;             // K (or V) of one head for max_seq_len tokens
  size_t region_bytes_per_layer_;  // K (or V) of one layer for max_seq_len tokens
  std::vector<bool> region_free_;
  std::map<SeqId, Sequence> seqs_;
  // storage_[layer]: K of every region, then V of every region.
  std::vector<std::unique_ptr<uint8_t[]>> storage_;
};

}  // namespace inferscope
