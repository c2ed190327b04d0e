#include "core/cuda/device_kv_mirror.h"

namespace inferscope {

DeviceKvMirror::DeviceKvMirror(const KvCache& kv)
    : regions_(allocate(kv.storage_regions())), map_(kv.storage_regions(), pointers(regions_)) {
  for (const DeviceAllocation& r : regions_) bytes_ += r.bytes();
}

std::vector<DeviceAllocation> DeviceKvMirror::allocate(const std::vector<KvRegion>& regions) {
  std::vector<DeviceAllocation> out;
  for (const KvRegion& r : regions) {
    out.emplace_back(r.bytes);
    // zeroed, so a slot attention masks out never holds a NaN pattern
    INFERSCOPE_CUDA_CHECK(cudaMemset(out.back().get(), 0, r.bytes));
  }
  return out;
}

std::vector<uint8_t*> DeviceKvMirror::pointers(const std::vector<DeviceAllocation>& regions) {
  std::vector<uint8_t*> out;
  for (const DeviceAllocation& r : regions) out.push_back(r.get<uint8_t>());
  return out;
}

void DeviceKvMirror::copied(const uint8_t* src, const uint8_t* dst, size_t bytes) {
  pending_.push_back(Copy{map_.map(src), map_.map(dst), bytes});
}

void DeviceKvMirror::flush(cudaStream_t stream) {
  for (const Copy& c : pending_) {
    INFERSCOPE_CUDA_CHECK(cudaMemcpyAsync(c.dst, c.src, c.bytes, cudaMemcpyDeviceToDevice, stream));
  }
  pending_.clear();
}

}  // namespace inferscope
