#include "core/kv/contiguous_kv_cache.h"

#include <stdexcept>
#include <string>

namespace inferscope {

ContiguousKvCache::ContiguousKvCache(KvGeometry geometry, int32_t max_seq_len, size_t budget_bytes)
    : KvCache(geometry), max_seq_len_(max_seq_len) {
  if (max_seq_len <= 0) throw std::invalid_argument("contiguous KV cache: max_seq_len must be positive");
  head_stride_ = static_cast<size_t>(max_seq_len) * geometry_.row_bytes();
  region_bytes_per_layer_ = head_stride_ * geometry.n_kv_heads;
  const size_t n_regions = budget_bytes / region_bytes();
  if (n_regions == 0) {
    throw std::invalid_argument("contiguous KV cache: budget of " + std::to_string(budget_bytes) +
                                " bytes cannot hold one region of " + std::to_string(max_seq_len) + " tokens (" +
                                std::to_string(region_bytes()) + " bytes)");
  }
  region_free_.assign(n_regions, true);
  // Pages are touched only when written, so an unused reservation costs address space, not RAM.
  for (int32_t l = 0; l < geometry.n_layers; ++l) {
    storage_.push_back(std::make_unique_for_overwrite<uint8_t[]>(2 * n_regions * region_bytes_per_layer_));
  }
}

int32_t ContiguousKvCache::take_region() {
  for (size_t r = 0; r < region_free_.size(); ++r) {
    if (!region_free_[r]) continue;
    region_free_[r] = false;
    return static_cast<int32_t>(r);
  }
  return -1;
}

bool ContiguousKvCache::allocate(SeqId seq, int32_t n_new, std::span<const int32_t> /*tokens*/) {
  if (n_new < 0) throw std::invalid_argument("contiguous KV cache: cannot allocate a negative token count");
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) {
    // A new sequence reserves a whole region for max_seq_len tokens, whatever it will use.
    if (n_new > max_seq_len_) return false;
    const int32_t region = take_region();
    if (region < 0) return false;
    seqs_[seq] = Sequence{region, n_new};
    return true;
  }
  if (it->second.length + n_new > max_seq_len_) return false;
  it->second.length += n_new;
  return true;
}

bool ContiguousKvCache::fork(SeqId parent, SeqId child) {
  const Sequence& p = seqs_.at(parent);
  if (seqs_.count(child) != 0) throw std::invalid_argument("contiguous KV cache: fork into an existing sequence");
  const int32_t region = take_region();
  if (region < 0) return false;
  // Regions are never shared: the child gets a copy of the parent's filled rows in every layer.
  const size_t n_regions = region_free_.size();
  for (auto& layer : storage_) {
    for (size_t kv_half = 0; kv_half < 2; ++kv_half) {
      uint8_t* base = layer.get() + kv_half * n_regions * region_bytes_per_layer_;
      for (int32_t h = 0; h < geometry_.n_kv_heads; ++h) {
        const size_t head = h * head_stride_;
        copy_kv_bytes(base + region * region_bytes_per_layer_ + head, base + p.region * region_bytes_per_layer_ + head,
                      static_cast<size_t>(p.length) * geometry_.row_bytes(), copy_listener_);
      }
    }
  }
  seqs_[child] = Sequence{region, p.length};
  return true;
}

void ContiguousKvCache::truncate(SeqId seq, int32_t length) {
  Sequence& s = seqs_.at(seq);
  if (length < 0 || length > s.length) throw std::out_of_range("contiguous KV cache: truncate beyond the length");
  s.length = length;
}

void ContiguousKvCache::free(SeqId seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  region_free_[it->second.region] = true;
  seqs_.erase(it);
}

int32_t ContiguousKvCache::length(SeqId seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? 0 : it->second.length;
}

void ContiguousKvCache::store(int32_t layer, SeqId seq, int32_t pos, const float* k, const float* v) {
  const Sequence& s = seqs_.at(seq);
  check_layer(layer);
  if (pos < 0 || pos >= s.length) throw std::out_of_range("contiguous KV cache: store past the allocated length");
  uint8_t* k_slot = storage_[layer].get() + s.region * region_bytes_per_layer_ +
                    static_cast<size_t>(pos) * geometry_.row_bytes();
  uint8_t* v_slot = k_slot + region_free_.size() * region_bytes_per_layer_;
  for (int32_t h = 0; h < geometry_.n_kv_heads; ++h) {
    write_row(k_slot + h * head_stride_, k + h * geometry_.head_dim);
    write_row(v_slot + h * head_stride_, v + h * geometry_.head_dim);
  }
}

KvView ContiguousKvCache::view(int32_t layer, SeqId seq) const {
  const Sequence& s = seqs_.at(seq);
  check_layer(layer);
  uint8_t* base = storage_[layer].get();
  KvView v;
  v.dtype = geometry_.dtype;
  v.length = s.length;
  v.block_size = max_seq_len_;
  v.block_table = &s.region;
  v.k_base = base;
  v.v_base = base + region_free_.size() * region_bytes_per_layer_;
  v.block_stride = region_bytes_per_layer_;
  v.head_stride = head_stride_;
  return v;
}

std::vector<KvRegion> ContiguousKvCache::storage_regions() const {
  std::vector<KvRegion> r;
  for (const auto& layer : storage_) r.push_back(KvRegion{layer.get(), 2 * region_free_.size() * region_bytes_per_layer_});
  return r;
}

KvStats ContiguousKvCache::stats() const {
  KvStats s;
  s.budget_bytes = region_free_.size() * region_bytes();
  s.sequences = static_cast<int32_t>(seqs_.size());
  for (const auto& [id, seq] : seqs_) {
    s.used_bytes += region_bytes();
    s.filled_tokens += seq.length;
    s.allocated_tokens += max_seq_len_;
  }
  return s;
}

}  // namespace inferscope

namespace inferscope {

KvSnapshot ContiguousKvCache::snapshot() const {
  KvSnapshot snap;
  snap.kind = "contiguous";
  snap.block_size = max_seq_len_;
  snap.blocks.resize(region_free_.size());
  for (const auto& [id, seq] : seqs_) {
    KvSnapshot::Block& region = snap.blocks[seq.region];
    region.owners = {id};
    region.ref_count = 1;
    region.filled = seq.length;
    snap.sequences.push_back(KvSnapshot::Sequence{id, seq.length, {seq.region}, {}, {}});
  }
  return snap;
}

}  // namespace inferscope
