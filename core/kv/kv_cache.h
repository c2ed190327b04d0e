// Where K and V live. The forward pass writes and reads them only through this interface, so the
// cache's layout (one contiguous region per sequence, or paged blocks) never leaks into the model.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/kv/kv_copy_listener.h"
#include "kernels/format/dtype.h"

namespace inferscope {

using SeqId = int32_t;

// The shape of what is cached per token.
struct KvGeometry {
  int32_t n_layers = 0;
  int32_t n_kv_heads = 0;
  int32_t head_dim = 0;
  DType dtype = DType::F16;  // F16 (default, as llama.cpp and vLLM), F32 or Q8_0 (see kv_dtype.h)

  // Bytes of one token's K (or V) of one KV head: head_dim elements in dtype. Throws
  // std::invalid_argument for a geometry no cache can hold (see kv_row_bytes).
  size_t row_bytes() const;
  // 2 (K and V) x row bytes x layers x kv heads.
  size_t bytes_per_token() const;
};

// How attention reads one sequence's K/V in one layer. Storage is a set of blocks of
// `block_size` tokens; within a block, each KV head's keys are contiguous:
//   K of token t, head h = k_base + block_table[t / block_size] * block_stride
//                          + h * head_stride + (t % block_size) * row_bytes
// (V likewise from v_base), row_bytes being head_dim elements in dtype (head_dim / 32 blocks for
// Q8_0). A contiguous cache is one block as large as its reservation.
struct KvView {
  DType dtype = DType::F16;
  int32_t length = 0;                  // tokens stored (positions 0 .. length-1)
  int32_t block_size = 0;
  const int32_t* block_table = nullptr;  // ceil(length / block_size) physical block ids
  const uint8_t* k_base = nullptr;
  const uint8_t* v_base = nullptr;
  size_t block_stride = 0;             // bytes from one physical block to the next
  size_t head_stride = 0;              // bytes from one KV head to the next inside a block

  const uint8_t* key(int32_t t, int32_t head, int32_t head_dim) const;
  const uint8_t* value(int32_t t, int32_t head, int32_t head_dim) const;
};

// Memory accounting, the numbers the dashboards plot. Every *_perc is a fraction 0..1 (as vLLM).
struct KvStats {
  bool paged = false;
  size_t budget_bytes = 0;
  size_t used_bytes = 0;        // bytes of storage held by sequences (contiguous: whole reservations)
  size_t filled_tokens = 0;     // token slots holding K/V of live sequences (shared slots once)
  size_t allocated_tokens = 0;  // token slots allocated (paged: blocks x block_size; contiguous: reserved)
  int32_t sequences = 0;
  // Paged only (0 for contiguous):
  int32_t blocks_total = 0, blocks_used = 0, blocks_cached = 0, blocks_free = 0;
  int32_t blocks_shared = 0;         // used blocks with more than one owner
  size_t bytes_saved_by_sharing = 0; // what the extra owners of shared blocks would otherwise hold
  int64_t prefix_cache_queries = 0;  // prompt tokens looked up in the prefix cache
  int64_t prefix_cache_hits = 0;     // of those, tokens found
  int64_t evictions = 0;             // cached blocks reclaimed for new data

  double kv_cache_usage_perc() const;             // used / budget
  double kv_internal_fragmentation_perc() const;  // paged: allocated-but-unfilled slots / allocated slots
  double kv_reserved_unused_perc() const;         // contiguous: reserved-but-unfilled slots / reserved slots
};

// What the GUI's block-table view draws: a copy, taken between steps.
struct KvSnapshot {
  struct Block {
    std::vector<SeqId> owners;  // empty when free or cached
    int32_t ref_count = 0;
    int32_t filled = 0;         // token slots written
    bool cached = false;        // free, but holding a reusable prefix block
    uint64_t hash = 0;          // prefix hash of a full block (0 when none)
  };
  struct Sequence {
    SeqId id = 0;
    int32_t length = 0;
    std::vector<int32_t> block_table;  // logical block i -> physical block (contiguous: its region)
    std::vector<int32_t> tokens;       // the token ids in its slots, where the owner knows them (the Engine fills them)
    std::string client;                // who asked for it, where the owner knows (the Engine fills it; "" for its own)
  };
  std::string kind;                    // "paged" or "contiguous"
  int32_t block_size = 0;              // contiguous: the reservation length
  std::vector<Block> blocks;           // contiguous: one per region
  std::vector<Sequence> sequences;
};

class KvCache {
 public:
  virtual ~KvCache() = default;
  virtual std::string name() const = 0;
  const KvGeometry& geometry() const { return geometry_; }

  // Makes room for n_new more tokens of `seq` (a new sequence starts empty). `tokens`, when given,
  // are the ids of the first tokens.size() (at most n_new) of them: a paged cache hashes every block
  // whose ids are all known, so later prompts can reuse it (prefix caching); name_tokens() gives the
  // ids of the rest once they are known (speculative drafts). Returns false, and changes nothing, when the budget or the
  // sequence's limit cannot hold them (out of memory is a state: the scheduler waits or preempts).
  // Blocks are registered for reuse at allocation, before their K/V are written: this is safe
  // because the forward pass stores every sequence's K/V of a layer before any attention reads it.
  virtual bool allocate(SeqId seq, int32_t n_new, std::span<const int32_t> tokens = {}) = 0;
  // For a sequence not yet in the cache: attaches cached blocks that hold a prefix of `prompt` and
  // returns how many tokens they cover (whole blocks, always fewer than prompt.size() so at least one
  // token is computed for the logits). 0 when nothing matches or the cache does not share.
  virtual int32_t attach_prefix(SeqId seq, std::span<const int32_t> prompt) { return 0; }
  // Releases everything `seq` holds; full blocks stay reusable (no-op for an unknown sequence).
  virtual void free(SeqId seq) = 0;
  // Releases `seq` and forgets its blocks' contents (after a failed step wrote only some of them).
  virtual void discard(SeqId seq) { free(seq); }
  // `child` (new) shares all of `parent`'s tokens; the first write into a shared, partly filled
  // block copies it (copy-on-write). False when the cache cannot (contiguous: no room for a copy).
  virtual bool fork(SeqId parent, SeqId child) = 0;
  // Shortens `seq` to `length` tokens (speculative-decoding rollback, regenerate).
  virtual void truncate(SeqId seq, int32_t length) = 0;
  // The ids of the tokens of `seq` that follow the last one named so far (slots allocated without
  // ids: accepted speculative drafts), so blocks they fill become reusable. Ids that would run past
  // the sequence's length, or a sequence whose ids stopped being known, are ignored.
  virtual void name_tokens(SeqId /*seq*/, std::span<const int32_t> /*tokens*/) {}
  // Tokens allocated to `seq` so far (0 for an unknown sequence).
  virtual int32_t length(SeqId seq) const = 0;
  // Writes K and V (n_kv_heads * head_dim floats each) of the token at `pos` (< length(seq)).
  virtual void store(int32_t layer, SeqId seq, int32_t pos, const float* k, const float* v) = 0;
  virtual KvView view(int32_t layer, SeqId seq) const = 0;
  virtual KvStats stats() const = 0;
  virtual KvSnapshot snapshot() const = 0;
  // The host allocations that every view and copy points into (what a device mirror allocates too).
  virtual std::vector<KvRegion> storage_regions() const = 0;
  // From now on `listener` hears every copy the cache makes inside its regions (an expired one: none).
  void set_copy_listener(std::weak_ptr<KvCopyListener> listener) { copy_listener_ = std::move(listener); }

 protected:
  // Throws std::invalid_argument for no layers or KV heads, or a dtype or head_dim the cache cannot
  // store (KvGeometry::row_bytes).
  explicit KvCache(KvGeometry geometry);
  // Throws std::out_of_range naming the cache and `layer` when it is not one of the model's layers.
  void check_layer(int32_t layer) const;
  // Converts one token's K or V for one head from f32 into the cache's dtype at dst.
  void write_row(uint8_t* dst, const float* src) const;
  KvGeometry geometry_;
  std::weak_ptr<KvCopyListener> copy_listener_;
};

}  // namespace inferscope
