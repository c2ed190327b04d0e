// Where K and V live. The forward pass writes and reads them only through this interface, so the
// cache's layout (one contiguous region per sequence, or paged blocks) never leaks into the model.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/cpu/dtype.h"

namespace inferscope {

using SeqId = int32_t;

// The shape of what is cached per token.
struct KvGeometry {
  int32_t n_layers = 0;
  int32_t n_kv_heads = 0;
  int32_t head_dim = 0;
  DType dtype = DType::F16;  // F16 (default, as llama.cpp and vLLM) or F32

  size_t element_bytes() const;
  // 2 (K and V) x bytes x layers x kv heads x head dim.
  size_t bytes_per_token() const;
};

// How attention reads one sequence's K/V in one layer. Storage is a set of blocks of
// `block_size` tokens; within a block, each KV head's keys are contiguous:
//   K of token t, head h = k_base + block_table[t / block_size] * block_stride
//                          + h * head_stride + (t % block_size) * head_dim * element_bytes
// (V likewise from v_base). A contiguous cache is one block as large as its reservation.
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

struct KvStats {
  size_t budget_bytes = 0;
  size_t used_bytes = 0;        // bytes of reserved/allocated storage
  size_t filled_tokens = 0;     // token slots holding K/V
  size_t allocated_tokens = 0;  // token slots allocated (contiguous: reserved)
  int32_t sequences = 0;
};

class KvCache {
 public:
  virtual ~KvCache() = default;
  virtual std::string name() const = 0;
  const KvGeometry& geometry() const { return geometry_; }

  // Makes room for n_new more tokens of `seq` (a new sequence starts empty). Returns false, and
  // changes nothing, when the budget or the sequence's limit cannot hold them.
  virtual bool allocate(SeqId seq, int32_t n_new) = 0;
  // Releases everything `seq` holds (no-op for an unknown sequence).
  virtual void free(SeqId seq) = 0;
  // Tokens allocated to `seq` so far (0 for an unknown sequence).
  virtual int32_t length(SeqId seq) const = 0;
  // Writes K and V (n_kv_heads * head_dim floats each) of the token at `pos` (< length(seq)).
  virtual void store(int32_t layer, SeqId seq, int32_t pos, const float* k, const float* v) = 0;
  virtual KvView view(int32_t layer, SeqId seq) const = 0;
  virtual KvStats stats() const = 0;

 protected:
  explicit KvCache(KvGeometry geometry) : geometry_(geometry) {}
  // Converts one token's K or V for one head from f32 into the cache's dtype at dst.
  void write_row(uint8_t* dst, const float* src) const;
  KvGeometry geometry_;
};

}  // namespace inferscope
