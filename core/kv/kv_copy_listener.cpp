#include "core/kv/kv_copy_listener.h"

#include <cstring>

namespace inferscope {

void copy_kv_bytes(uint8_t* dst, const uint8_t* src, size_t bytes, const std::weak_ptr<KvCopyListener>& listener) {
  std::memcpy(dst, src, bytes);
  if (const std::shared_ptr<KvCopyListener> l = listener.lock()) l->copied(src, dst, bytes);
}

}  // namespace inferscope
