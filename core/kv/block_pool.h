// The physical blocks of a paged KV cache and who holds them: a reference count per block, a free
// list, and an LRU list of cached blocks (unreferenced, but still holding a reusable prefix) that
// are reclaimed least recently used first, only once the free list is empty.
#pragma once
#include <cstdint>
#include <list>
#include <vector>

namespace inferscope {

class BlockPool {
 public:
  explicit BlockPool(int32_t n_blocks);

  int32_t total() const { return static_cast<int32_t>(ref_.size()); }
  int32_t free_count() const { return static_cast<int32_t>(free_.size()); }
  int32_t cached_count() const { return static_cast<int32_t>(lru_.size()); }
  int32_t used_count() const { return total() - free_count() - cached_count(); }
  // Blocks take() can still hand out: free ones, then cached ones (by eviction).
  int32_t available() const { return free_count() + cached_count(); }

  struct Taken {
    int32_t block = -1;
    bool evicted = false;  // it was a cached block: the caller must forget its old contents
  };
  // A block for new data, with ref count 1: the most recently freed free block, else the least
  // recently used cached one. Throws std::logic_error when none is available (check available()).
  Taken take();
  // One more owner. A cached block leaves the LRU list (it is in use again).
  void retain(int32_t block);
  // One owner fewer. At 0 the block becomes cached (most recently used) when `cache`, else free.
  void release(int32_t block, bool cache);
  // A cached block whose contents are no longer findable goes to the free list.
  void uncache(int32_t block);

  int32_t ref_count(int32_t block) const { return ref_[block]; }
  bool cached(int32_t block) const { return cached_[block]; }

 private:
  std::vector<int32_t> ref_;
  std::vector<int32_t> free_;  // a stack: the block freed last is reused first
  std::list<int32_t> lru_;     // cached blocks, least recently used at the front
  std::vector<std::list<int32_t>::iterator> lru_pos_;  // each cached block's place in lru_
  std::vector<bool> cached_;
};

}  // namespace inferscope
