#include "core/kv/prefix_cache.h"

#include <algorithm>

namespace inferscope {

namespace {

// A full 64-bit avalanche: every input bit flips about half the output bits.
uint64_t avalanche(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 29;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 32;
  return x;
}

bool same_tokens(const std::vector<int32_t>& stored, std::span<const int32_t> tokens) {
  return std::equal(stored.begin(), stored.end(), tokens.begin(), tokens.end());
}

}  // namespace

uint64_t prefix_block_hash(uint64_t parent_hash, std::span<const int32_t> tokens) {
  uint64_t h = avalanche(parent_hash ^ 0x9e3779b97f4a7c15ULL);
  for (int32_t t : tokens) {
    // FNV-1a style step on a whole token id, rotated so that high bits feed back into low ones.
    h = (h ^ static_cast<uint32_t>(t)) * 0x100000001b3ULL;
    h = (h << 23) | (h >> 41);
  }
  h = avalanche(h ^ tokens.size());
  return h == 0 ? 1 : h;  // 0 means "no hash"
}

PrefixCache::PrefixCache(int32_t n_blocks) : entries_(n_blocks) {}

PrefixCache::Inserted PrefixCache::insert(int32_t block, uint64_t hash, std::optional<Holder> parent,
                                          std::span<const int32_t> tokens) {
  Inserted result;
  forget(block);
  // A child of a forgotten parent could never be reached by a prompt walk.
  if (!live(parent)) return result;
  auto it = by_hash_.find(hash);
  if (it != by_hash_.end()) {
    const int32_t other = it->second;
    const Entry& e = entries_[other];
    if (live(e.parent)) {
      // The same prefix computed twice keeps its first holder; a collision registers nothing.
      if (e.parent == parent && same_tokens(e.tokens, tokens)) result.holder = Holder{other, e.registration};
      return result;
    }
    result.displaced = other;
    forget(other);
  }
  Entry& e = entries_[block];
  e.hash = hash;
  e.registration = next_registration_++;
  e.parent = parent;
  e.tokens.assign(tokens.begin(), tokens.end());
  by_hash_[hash] = block;
  result.holder = Holder{block, e.registration};
  return result;
}

std::optional<PrefixCache::Holder> PrefixCache::find(uint64_t hash, std::optional<Holder> parent,
                                                     std::span<const int32_t> tokens) const {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return std::nullopt;
  const Entry& e = entries_[it->second];
  if (e.parent != parent || !live(parent) || !same_tokens(e.tokens, tokens)) return std::nullopt;
  return Holder{it->second, e.registration};
}

void PrefixCache::forget(int32_t block) {
  Entry& e = entries_[block];
  if (e.registration == 0) return;
  by_hash_.erase(e.hash);
  e = Entry{};
}

}  // namespace inferscope
