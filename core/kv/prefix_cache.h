// Automatic prefix caching: which physical block holds the K/V of which run of prompt tokens.
// A full block is keyed by hash(parent block's hash, its token ids), so equal keys mean equal
// prefixes up to that block. Lookups are exact, not only by hash: a hit needs the same token ids
// and the same parent block, still holding the prefix it held when the child was registered, so a
// 64-bit collision can never hand out another prefix's K/V.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace inferscope {

// The key of a full block after a block keyed `parent_hash` (0 for the first block). Never 0.
uint64_t prefix_block_hash(uint64_t parent_hash, std::span<const int32_t> tokens);

class PrefixCache {
 public:
  explicit PrefixCache(int32_t n_blocks);

  // A findable block as it was registered: stale once that block is forgotten or registered again.
  struct Holder {
    int32_t block = -1;
    uint64_t registration = 0;
    bool operator==(const Holder&) const = default;
  };
  struct Inserted {
    std::optional<Holder> holder;  // the block now findable for these tokens; none after a collision
    int32_t displaced = -1;        // a stale block (its parent was forgotten) that lost the key
  };
  // Registers `block` as holding `tokens` after `parent` (nullopt: the first block of a prompt), in
  // place of any key it had. When a live block already holds exactly these tokens after that parent,
  // that block stays the holder and `block` remains unfindable (a duplicate).
  Inserted insert(int32_t block, uint64_t hash, std::optional<Holder> parent, std::span<const int32_t> tokens);
  // The block holding exactly `tokens` right after `parent` (nullopt: the first block), if any.
  std::optional<Holder> find(uint64_t hash, std::optional<Holder> parent, std::span<const int32_t> tokens) const;
  // `block` is no longer findable (evicted, overwritten, or its contents are not trusted).
  void forget(int32_t block);

  bool findable(int32_t block) const { return entries_[block].registration != 0; }
  uint64_t hash(int32_t block) const { return entries_[block].hash; }  // 0 when not findable

 private:
  struct Entry {
    uint64_t hash = 0;
    uint64_t registration = 0;  // unique per insert; 0 when not findable
    std::optional<Holder> parent;
    std::vector<int32_t> tokens;
  };
  // `parent` is the start of a prompt, or a block still registered as it was.
  bool live(const std::optional<Holder>& parent) const {
    return !parent || entries_[parent->block].registration == parent->registration;
  }

  std::vector<Entry> entries_;                     // one per physical block
  std::unordered_map<uint64_t, int32_t> by_hash_;  // key -> findable block
  uint64_t next_registration_ = 1;
};

}  // namespace inferscope
