#include "core/kv/block_storage.h"


namespace inferscope {

BlockStorage::BlockStorage(const KvGeometry& geometry, int32_t block_size, int32_t n_blocks)
    : row_bytes_(geometry.row_bytes()),
      head_stride_(row_bytes_ * block_size),
      block_stride_(head_stride_ * geometry.n_kv_heads),
      pool_bytes_(block_stride_ * static_cast<size_t>(n_blocks)) {
  // Left uninitialised: pages are touched only when written, so an idle budget costs no RAM.
  for (int32_t l = 0; l < geometry.n_layers; ++l) {
    k_.emplace_back(static_cast<uint8_t*>(::operator new[](pool_bytes_, kAlign)));
    v_.emplace_back(static_cast<uint8_t*>(::operator new[](pool_bytes_, kAlign)));
  }
}

void BlockStorage::copy_block(int32_t from, int32_t to, const std::weak_ptr<KvCopyListener>& listener) {
  const size_t src = static_cast<size_t>(from) * block_stride_;
  const size_t dst = static_cast<size_t>(to) * block_stride_;
  for (size_t l = 0; l < k_.size(); ++l) {
    copy_kv_bytes(k_[l].get() + dst, k_[l].get() + src, block_stride_, listener);
    copy_kv_bytes(v_[l].get() + dst, v_[l].get() + src, block_stride_, listener);
  }
}

std::vector<KvRegion> BlockStorage::regions() const {
  std::vector<KvRegion> r;
  for (const Pool& k : k_) r.push_back(KvRegion{k.get(), pool_bytes_});
  for (const Pool& v : v_) r.push_back(KvRegion{v.get(), pool_bytes_});
  return r;
}

}  // namespace inferscope
