// A device copy of a KV cache's storage: the same regions, block size and layout, so a KvView's host
// address maps to the device by its offset. The cache's own copies (copy-on-write, fork) are heard
// as they happen and replayed on the device before the next step (flush); the forward pass writes
// K/V into the device pools itself, so the host pools stay unwritten.
#pragma once
#include <vector>

#include "core/cuda/device_allocation.h"
#include "core/kv/kv_cache.h"
#include "core/kv/kv_region_map.h"

namespace inferscope {

class DeviceKvMirror final : public KvCopyListener {
 public:
  // Allocates one device region per host region of `kv` (zeroed).
  explicit DeviceKvMirror(const KvCache& kv);
  uint8_t* device(const uint8_t* host) const { return map_.map(host); }
  void copied(const uint8_t* src, const uint8_t* dst, size_t bytes) override;
  // Queues the copies heard since the last flush on `stream`, in the order they were made.
  void flush(cudaStream_t stream);
  size_t bytes() const { return bytes_; }

 private:
  struct Copy {
    const uint8_t* src;
    uint8_t* dst;
    size_t bytes;
  };
  static std::vector<DeviceAllocation> allocate(const std::vector<KvRegion>& regions);
  static std::vector<uint8_t*> pointers(const std::vector<DeviceAllocation>& regions);

  std::vector<DeviceAllocation> regions_;
  KvRegionMap map_;
  std::vector<Copy> pending_;
  size_t bytes_ = 0;
};

}  // namespace inferscope
