#include "core/kv/paged_kv_cache.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/kv/block_pool.h"
#include "core/kv/block_storage.h"
#include "core/kv/prefix_cache.h"

namespace inferscope {

// Copy-on-write happens in allocate(), not in store(): allocate() is the only call allowed to fail
// for lack of memory, so the block a shared, partly filled tail needs is taken there (or allocate
// returns false), and store() never has to find memory.
struct PagedKvCache::Impl {
  struct Sequence {
    std::vector<int32_t> table;    // logical block -> physical block; ceil(length / block_size) entries
    int32_t length = 0;
    std::vector<int32_t> tokens;   // prefix caching on: ids of positions 0..tokens.size()-1, all of them
                                   // or up to the first allocate that gave none (later blocks cannot
                                   // be identified)
    // Each full block whose ids are known (prefix caching on): its prefix hash, and the block that
    // is findable for it (this one, or an identical block registered before; none after a collision).
    struct FullBlock {
      uint64_t hash = 0;
      std::optional<PrefixCache::Holder> holder;
    };
    std::vector<FullBlock> full;
  };

  Impl(const KvGeometry& geometry, int32_t bs, int32_t n_blocks, bool caching)
      : block_size(bs), prefix_caching(caching), pool(n_blocks), prefix(n_blocks), storage(geometry, bs, n_blocks) {}

  int32_t block_size;
  bool prefix_caching;
  BlockPool pool;
  PrefixCache prefix;
  BlockStorage storage;
  std::map<SeqId, Sequence> seqs;  // nodes are stable, so views may point into their tables
  int64_t queries = 0, hits = 0, evictions = 0;

  int32_t blocks_for(int64_t tokens) const { return static_cast<int32_t>((tokens + block_size - 1) / block_size); }

  int32_t take_block() {
    const BlockPool::Taken t = pool.take();
    if (t.evicted) {
      prefix.forget(t.block);
      ++evictions;
    }
    return t.block;
  }

  // One owner fewer; an unowned block stays findable (cached) only when `keep` and it is registered.
  void release_block(int32_t block, bool keep) {
    const bool cache = keep && prefix.findable(block);
    pool.release(block, cache);
    if (pool.ref_count(block) == 0 && !cache) prefix.forget(block);
  }

  // Tail first, so that under LRU a prompt's later blocks are evicted before its earlier ones.
  void release_all(Sequence& s, bool keep) {
    for (auto it = s.table.rbegin(); it != s.table.rend(); ++it) release_block(*it, keep);
    s.table.clear();
  }

  // Before new tokens go into a partly filled last block: a shared one is copied for this sequence
  // (copy-on-write); an unshared one that still holds a registered full block (truncated into) stops
  // being findable, since its slots past the new length are about to be overwritten.
  void prepare_tail_for_write(Sequence& s, const std::weak_ptr<KvCopyListener>& listener) {
    if (s.length % block_size == 0) return;
    int32_t& tail = s.table.back();
    if (pool.ref_count(tail) > 1) {
      const int32_t copy = take_block();
      storage.copy_block(tail, copy, listener);
      pool.release(tail, false);  // still owned by the others
      tail = copy;
    } else {
      prefix.forget(tail);
    }
  }

  // Hashes and registers every block that is full and whose token ids are all known.
  void register_full_blocks(Sequence& s) {
    const size_t n_full = s.tokens.size() / block_size;
    while (s.full.size() < n_full) {
      const size_t i = s.full.size();
      const std::span<const int32_t> ids(s.tokens.data() + i * block_size, block_size);
      Sequence::FullBlock fb{prefix_block_hash(i == 0 ? 0 : s.full[i - 1].hash, ids), std::nullopt};
      // After a block nobody can find, later blocks cannot be found either.
      if (i == 0 || s.full[i - 1].holder) {
        const PrefixCache::Inserted r =
            prefix.insert(s.table[i], fb.hash, i == 0 ? std::nullopt : s.full[i - 1].holder, ids);
        fb.holder = r.holder;
        // A stale block that lost its key can no longer be found: no reason to keep it cached.
        if (r.displaced >= 0 && pool.cached(r.displaced)) pool.uncache(r.displaced);
      }
      s.full.push_back(fb);
    }
  }

  // Slots written per physical block: the longest coverage among its owners; cached blocks are full.
  std::vector<int32_t> block_fill() const {
    std::vector<int32_t> fill(pool.total(), 0);
    for (int32_t b = 0; b < pool.total(); ++b) {
      if (pool.cached(b)) fill[b] = block_size;
    }
    for (const auto& [id, s] : seqs) {
      for (size_t i = 0; i < s.table.size(); ++i) {
        const int32_t covered = std::min<int32_t>(block_size, s.length - static_cast<int32_t>(i) * block_size);
        fill[s.table[i]] = std::max(fill[s.table[i]], covered);
      }
    }
    return fill;
  }

  const Sequence& at(SeqId seq) const {
    auto it = seqs.find(seq);
    if (it == seqs.end()) throw std::out_of_range("paged KV cache: unknown sequence " + std::to_string(seq));
    return it->second;
  }
};

namespace {

// Checks the settings and returns how many blocks the budget holds.
int32_t count_blocks(const KvGeometry& g, int32_t block_size, size_t budget_bytes) {
  if (block_size != 8 && block_size != 16 && block_size != 32) {
    throw std::invalid_argument("paged KV cache: block size " + std::to_string(block_size) +
                                " is not one of 8, 16, 32");
  }
  const size_t block_bytes = g.bytes_per_token() * static_cast<size_t>(block_size);
  const size_t n = budget_bytes / block_bytes;
  if (n == 0) {
    throw std::invalid_argument("paged KV cache: budget of " + std::to_string(budget_bytes) +
                                " bytes cannot hold one block of " + std::to_string(block_size) + " tokens (" +
                                std::to_string(block_bytes) + " bytes)");
  }
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw std::invalid_argument("paged KV cache: budget of " + std::to_string(budget_bytes) +
                                " bytes is more than 2^31 blocks");
  }
  return static_cast<int32_t>(n);
}

}  // namespace

PagedKvCache::PagedKvCache(KvGeometry geometry, int32_t block_size, size_t budget_bytes, bool prefix_cache)
    : KvCache(geometry), block_size_(block_size) {
  const int32_t n_blocks = count_blocks(geometry, block_size, budget_bytes);
  impl_ = std::make_unique<Impl>(geometry, block_size, n_blocks, prefix_cache);
}

PagedKvCache::~PagedKvCache() = default;

int32_t PagedKvCache::total_blocks() const { return impl_->pool.total(); }

size_t PagedKvCache::block_bytes() const { return geometry_.bytes_per_token() * static_cast<size_t>(block_size_); }

bool PagedKvCache::allocate(SeqId seq, int32_t n_new, std::span<const int32_t> tokens) {
  if (n_new < 0) throw std::invalid_argument("paged KV cache: cannot allocate a negative token count");
  if (tokens.size() > static_cast<size_t>(n_new)) {
    throw std::invalid_argument("paged KV cache: allocate got " + std::to_string(tokens.size()) + " token ids for " +
                                std::to_string(n_new) + " tokens");
  }
  Impl& I = *impl_;
  auto it = I.seqs.find(seq);
  const int32_t old_len = it == I.seqs.end() ? 0 : it->second.length;
  const int64_t new_len = static_cast<int64_t>(old_len) + n_new;
  if (new_len > std::numeric_limits<int32_t>::max()) return false;
  // Everything is checked before anything changes, so a refusal leaves the cache as it was.
  const bool copy_tail = n_new > 0 && old_len % block_size_ != 0 && I.pool.ref_count(it->second.table.back()) > 1;
  const int32_t new_blocks = I.blocks_for(new_len) - I.blocks_for(old_len);
  if (new_blocks + (copy_tail ? 1 : 0) > I.pool.available()) return false;

  Impl::Sequence& s = I.seqs[seq];
  if (n_new > 0) I.prepare_tail_for_write(s, copy_listener_);
  for (int32_t i = 0; i < new_blocks; ++i) s.table.push_back(I.take_block());
  if (I.prefix_caching && !tokens.empty() && s.tokens.size() == static_cast<size_t>(old_len)) {
    s.tokens.insert(s.tokens.end(), tokens.begin(), tokens.end());
  }
  s.length = static_cast<int32_t>(new_len);
  if (I.prefix_caching) I.register_full_blocks(s);
  return true;
}

int32_t PagedKvCache::attach_prefix(SeqId seq, std::span<const int32_t> prompt) {
  Impl& I = *impl_;
  if (!I.prefix_caching) return 0;
  auto it = I.seqs.find(seq);
  if (it != I.seqs.end() && it->second.length > 0) {
    throw std::logic_error("paged KV cache: attach_prefix on sequence " + std::to_string(seq) + " that holds tokens");
  }
  I.queries += static_cast<int64_t>(prompt.size());
  // Whole blocks only, and never the last prompt token: its logits must be computed.
  const size_t max_blocks = prompt.empty() ? 0 : (prompt.size() - 1) / block_size_;
  std::vector<int32_t> blocks;
  std::vector<Impl::Sequence::FullBlock> full;
  for (size_t i = 0; i < max_blocks; ++i) {
    const std::span<const int32_t> ids = prompt.subspan(i * block_size_, block_size_);
    const uint64_t hash = prefix_block_hash(full.empty() ? 0 : full.back().hash, ids);
    const std::optional<PrefixCache::Holder> found =
        I.prefix.find(hash, full.empty() ? std::nullopt : full.back().holder, ids);
    if (!found) break;  // the chain is broken: later blocks cannot be this prompt's
    blocks.push_back(found->block);
    full.push_back({hash, found});
  }
  if (blocks.empty()) return 0;
  for (int32_t b : blocks) I.pool.retain(b);
  const int32_t covered = static_cast<int32_t>(blocks.size()) * block_size_;
  Impl::Sequence& s = I.seqs[seq];
  s.table = std::move(blocks);
  s.full = std::move(full);
  s.tokens.assign(prompt.begin(), prompt.begin() + covered);
  s.length = covered;
  I.hits += covered;
  return covered;
}

void PagedKvCache::free(SeqId seq) {
  auto it = impl_->seqs.find(seq);
  if (it == impl_->seqs.end()) return;
  impl_->release_all(it->second, true);
  impl_->seqs.erase(it);
}

// Blocks that other sequences still hold keep their registration: those owners vouch for them.
void PagedKvCache::discard(SeqId seq) {
  auto it = impl_->seqs.find(seq);
  if (it == impl_->seqs.end()) return;
  impl_->release_all(it->second, false);
  impl_->seqs.erase(it);
}

bool PagedKvCache::fork(SeqId parent, SeqId child) {
  Impl& I = *impl_;
  if (I.seqs.contains(child)) {
    throw std::invalid_argument("paged KV cache: fork into sequence " + std::to_string(child) + " that already exists");
  }
  Impl::Sequence copy = I.at(parent);
  for (int32_t b : copy.table) I.pool.retain(b);
  I.seqs.emplace(child, std::move(copy));
  return true;
}

void PagedKvCache::truncate(SeqId seq, int32_t length) {
  Impl& I = *impl_;
  auto it = I.seqs.find(seq);
  const int32_t old_len = it == I.seqs.end() ? 0 : it->second.length;
  if (length < 0 || length > old_len) {
    throw std::out_of_range("paged KV cache: cannot truncate sequence " + std::to_string(seq) + " of " +
                            std::to_string(old_len) + " tokens to " + std::to_string(length));
  }
  if (it == I.seqs.end()) return;
  Impl::Sequence& s = it->second;
  const size_t keep = static_cast<size_t>(I.blocks_for(length));
  // Tail first (see release_all); dropped full blocks stay cached, their K/V are still right.
  while (s.table.size() > keep) {
    I.release_block(s.table.back(), true);
    s.table.pop_back();
  }
  s.length = length;
  s.tokens.resize(std::min(s.tokens.size(), static_cast<size_t>(length)));
  // A kept block that is no longer full loses its hash for this sequence; the physical block stays
  // findable until the sequence writes into it again (prepare_tail_for_write), its K/V untouched.
  s.full.resize(std::min(s.full.size(), s.tokens.size() / block_size_));
}

void PagedKvCache::name_tokens(SeqId seq, std::span<const int32_t> tokens) {
  Impl& I = *impl_;
  auto it = I.seqs.find(seq);
  if (!I.prefix_caching || it == I.seqs.end()) return;
  Impl::Sequence& s = it->second;
  if (s.tokens.size() + tokens.size() > static_cast<size_t>(s.length)) return;
  s.tokens.insert(s.tokens.end(), tokens.begin(), tokens.end());
  I.register_full_blocks(s);
}

int32_t PagedKvCache::length(SeqId seq) const {
  auto it = impl_->seqs.find(seq);
  return it == impl_->seqs.end() ? 0 : it->second.length;
}

void PagedKvCache::store(int32_t layer, SeqId seq, int32_t pos, const float* k, const float* v) {
  const Impl::Sequence& s = impl_->at(seq);
  check_layer(layer);
  if (pos < 0 || pos >= s.length) throw std::out_of_range("paged KV cache: store past the allocated length");
  const int32_t block = s.table[pos / block_size_];
  const int32_t slot = pos % block_size_;
  for (int32_t h = 0; h < geometry_.n_kv_heads; ++h) {
    write_row(impl_->storage.k_row(layer, block, h, slot), k + static_cast<size_t>(h) * geometry_.head_dim);
    write_row(impl_->storage.v_row(layer, block, h, slot), v + static_cast<size_t>(h) * geometry_.head_dim);
  }
}

KvView PagedKvCache::view(int32_t layer, SeqId seq) const {
  const Impl::Sequence& s = impl_->at(seq);
  check_layer(layer);
  KvView v;
  v.dtype = geometry_.dtype;
  v.length = s.length;
  v.block_size = block_size_;
  v.block_table = s.table.data();
  v.k_base = impl_->storage.k_base(layer);
  v.v_base = impl_->storage.v_base(layer);
  v.block_stride = impl_->storage.block_stride();
  v.head_stride = impl_->storage.head_stride();
  return v;
}

std::vector<KvRegion> PagedKvCache::storage_regions() const { return impl_->storage.regions(); }

KvStats PagedKvCache::stats() const {
  const Impl& I = *impl_;
  KvStats st;
  st.paged = true;
  st.budget_bytes = static_cast<size_t>(I.pool.total()) * block_bytes();
  st.sequences = static_cast<int32_t>(I.seqs.size());
  st.blocks_total = I.pool.total();
  st.blocks_used = I.pool.used_count();
  st.blocks_cached = I.pool.cached_count();
  st.blocks_free = I.pool.free_count();
  st.used_bytes = static_cast<size_t>(st.blocks_used) * block_bytes();
  st.allocated_tokens = static_cast<size_t>(st.blocks_used) * block_size_;
  const std::vector<int32_t> fill = I.block_fill();
  for (int32_t b = 0; b < I.pool.total(); ++b) {
    const int32_t refs = I.pool.ref_count(b);
    if (refs == 0) continue;  // free or cached: holds no live sequence's K/V
    st.filled_tokens += static_cast<size_t>(fill[b]);
    if (refs > 1) {
      ++st.blocks_shared;
      st.bytes_saved_by_sharing += static_cast<size_t>(refs - 1) * block_bytes();
    }
  }
  st.prefix_cache_queries = I.queries;
  st.prefix_cache_hits = I.hits;
  st.evictions = I.evictions;
  return st;
}

KvSnapshot PagedKvCache::snapshot() const {
  const Impl& I = *impl_;
  KvSnapshot snap;
  snap.kind = "paged";
  snap.block_size = block_size_;
  snap.blocks.resize(I.pool.total());
  const std::vector<int32_t> fill = I.block_fill();
  for (int32_t b = 0; b < I.pool.total(); ++b) {
    KvSnapshot::Block& blk = snap.blocks[b];
    blk.ref_count = I.pool.ref_count(b);
    blk.filled = fill[b];
    blk.cached = I.pool.cached(b);
    blk.hash = I.prefix.hash(b);
  }
  for (const auto& [id, s] : I.seqs) {
    for (int32_t b : s.table) snap.blocks[b].owners.push_back(id);  // ascending ids: the map's order
    snap.sequences.push_back(KvSnapshot::Sequence{id, s.length, s.table, {}, {}});
  }
  return snap;
}

}  // namespace inferscope
