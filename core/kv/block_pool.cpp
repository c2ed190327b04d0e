#include "core/kv/block_pool.h"

#include <stdexcept>
#include <string>

namespace inferscope {

BlockPool::BlockPool(int32_t n_blocks)
    : ref_(n_blocks, 0), lru_pos_(n_blocks), cached_(n_blocks, false) {
  free_.reserve(n_blocks);
  // Pushed in reverse so that block 0 is handed out first.
  for (int32_t b = n_blocks - 1; b >= 0; --b) free_.push_back(b);
}

BlockPool::Taken BlockPool::take() {
  Taken t;
  if (!free_.empty()) {
    t.block = free_.back();
    free_.pop_back();
  } else if (!lru_.empty()) {
    t.block = lru_.front();
    lru_.pop_front();
    cached_[t.block] = false;
    t.evicted = true;
  } else {
    throw std::logic_error("block pool: no free or cached block left");
  }
  ref_[t.block] = 1;
  return t;
}

void BlockPool::retain(int32_t block) {
  if (cached_[block]) {
    lru_.erase(lru_pos_[block]);
    cached_[block] = false;
  } else if (ref_[block] == 0) {
    throw std::logic_error("block pool: block " + std::to_string(block) + " is free and cannot be shared");
  }
  ++ref_[block];
}

void BlockPool::release(int32_t block, bool cache) {
  if (ref_[block] == 0) throw std::logic_error("block pool: block " + std::to_string(block) + " freed twice");
  if (--ref_[block] > 0) return;
  if (cache) {
    cached_[block] = true;
    lru_pos_[block] = lru_.insert(lru_.end(), block);
  } else {
    free_.push_back(block);
  }
}

void BlockPool::uncache(int32_t block) {
  if (!cached_[block]) return;
  lru_.erase(lru_pos_[block]);
  cached_[block] = false;
  free_.push_back(block);
}

}  // namespace inferscope
