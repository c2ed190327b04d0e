// Maps addresses inside a KV cache's host regions onto a copy of those regions elsewhere (a device
// mirror): the same offset into the matching region.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/kv/kv_copy_listener.h"

namespace inferscope {

class KvRegionMap {
 public:
  // `to[i]` holds at least from[i].bytes bytes.
  KvRegionMap(std::vector<KvRegion> from, std::vector<uint8_t*> to) : from_(std::move(from)), to_(std::move(to)) {
    if (from_.size() != to_.size()) throw std::invalid_argument("KV region map: one target per region");
  }
  // The address in the copy of `host` (inside one region, or one past its end); std::out_of_range otherwise.
  // Inside a region wins: regions may be adjacent, so one region's end can be the next one's start.
  uint8_t* map(const uint8_t* host) const {
    for (size_t i = 0; i < from_.size(); ++i) {
      if (host >= from_[i].base && host < from_[i].base + from_[i].bytes) return to_[i] + (host - from_[i].base);
    }
    for (size_t i = 0; i < from_.size(); ++i) {
      if (host == from_[i].base + from_[i].bytes) return to_[i] + from_[i].bytes;
    }
    throw std::out_of_range("KV region map: an address outside the cache's storage");
  }

 private:
  std::vector<KvRegion> from_;
  std::vector<uint8_t*> to_;
};

}  // namespace inferscope
