// The seam between the engine and the hardware: one batched forward pass (llama2.c's forward(),
// batched) that appends every new token's K/V to the cache and fills the logits the batch asks for.
// ModelExecutor (sampling, speculation, logits hand-out) drives any implementation the same way:
// LlamaForward on the CPU, CudaForward (core/cuda) on a GPU.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/kv/kv_cache.h"
#include "core/model/device_memory.h"
#include "core/tokenizer/vocab.h"

namespace inferscope {

class Attention;
class ThreadPool;

struct BatchSeq {
  SeqId seq = 0;
  std::span<const TokenId> tokens;  // new tokens, at positions pos0 .. pos0 + size - 1
  int32_t pos0 = 0;                 // the cache must already hold room up to pos0 + size
  int64_t logits_rows = 1;          // logits for the last this-many new tokens (every one to verify
                                    // drafts, the scored ones for perplexity); the last always has them
};

// The first of s's new tokens with a logits row (0 when it brings none).
inline int64_t first_logits_token(const BatchSeq& s) {
  const auto n = static_cast<int64_t>(s.tokens.size());
  return n == 0 ? 0 : n - std::min(std::max<int64_t>(s.logits_rows, 1), n);
}

// What one run() measured.
struct ForwardStats {
  size_t attention_scratch_bytes = 0;  // attention's scratch at its peak
  double attention_seconds = 0;        // all layers
  double matmul_seconds = 0;           // every matmul
};

class ForwardPass {
 public:
  virtual ~ForwardPass() = default;
  // Appends K/V of every new token to `kv`, writes logits (one row of vocab_size floats per
  // requested position, sequences in batch order) and returns what it measured. `attention` is the
  // engine's choice (an implementation that runs elsewhere follows its name()); `pool` the CPU's
  // workers. `layers` > 0 runs only the first `layers` layers before the final norm and output head
  // (an early-exit draft). Throws std::invalid_argument for a bad token id or a batch the cache has
  // no room for, and DeviceFailure (core/model/device_failure.h) when the device it runs on fails.
  virtual ForwardStats run(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention, ThreadPool& pool,
                           std::vector<float>& logits, int32_t layers = 0) = 0;
  // What it holds on a device now (weights, KV, scratch); nullopt on the CPU.
  virtual std::optional<DeviceMemory> device_memory() const { return std::nullopt; }
};

// The tokens a batch computes, and the logits rows it asks for.
struct BatchSize {
  int64_t tokens = 0;
  int64_t logits_rows = 0;
};

// Checks that every sequence has cache room for its tokens and every token id is below vocab_size
// (std::invalid_argument naming the first that fails), and counts the batch.
BatchSize check_batch(std::span<const BatchSeq> batch, const KvCache& kv, int32_t vocab_size);

}  // namespace inferscope
