// Hears every copy a KV cache makes inside its own storage (copy-on-write of a shared block, a
// contiguous fork), so that a mirror of that storage elsewhere (a GPU's) can make the same copy before
// the next step reads it. Stores are not reported: whoever mirrors the storage also writes K/V itself.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace inferscope {

// One host allocation of a cache's storage; every address a KvView or a copy names lies in one.
struct KvRegion {
  const uint8_t* base = nullptr;
  size_t bytes = 0;

  bool operator==(const KvRegion&) const = default;
};

class KvCopyListener {
 public:
  virtual ~KvCopyListener() = default;
  // `bytes` were copied from src to dst, both inside the cache's regions.
  virtual void copied(const uint8_t* src, const uint8_t* dst, size_t bytes) = 0;
};

// memcpy(dst, src, bytes), then tells `listener` when it is still alive.
void copy_kv_bytes(uint8_t* dst, const uint8_t* src, size_t bytes, const std::weak_ptr<KvCopyListener>& listener);

}  // namespace inferscope
