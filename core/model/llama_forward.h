// The Llama forward pass over a batch of sequences that share one step (llama2.c's forward(),
// batched): every sequence brings a run of new tokens; K/V go through the KvCache; logits are
// computed only where asked.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "core/kv/kv_cache.h"
#include "core/tokenizer/vocab.h"
#include "kernels/cpu/matmul.h"

namespace inferscope {

class Attention;
class LlamaModel;
class ThreadPool;
struct LlamaWeights;

struct BatchSeq {
  SeqId seq = 0;
  std::span<const TokenId> tokens;  // new tokens, at positions pos0 .. pos0 + size - 1
  int32_t pos0 = 0;                 // the cache must already hold room up to pos0 + size
  bool all_logits = false;          // logits for every token (perplexity, draft verification), else the last
};

class LlamaForward {
 public:
  // `matmul` says how activations meet quantized weights (exact f32 by default, or int8 as llama.cpp).
  // Runs on the model's own weights.
  explicit LlamaForward(const LlamaModel& model, const MatmulOptions& matmul = {});
  // Runs on `weights` (the model's matrices at another quantization level); they must have the
  // model's shapes and outlive the LlamaForward.
  LlamaForward(const LlamaModel& model, const LlamaWeights& weights, const MatmulOptions& matmul = {});

  // Appends K/V of every new token to `kv` and writes logits: one row of vocab_size floats per
  // requested position, sequences in batch order. `layers` > 0 runs only the first `layers` layers
  // before the final norm and output head (an early-exit draft; K/V of the later layers are left
  // as they are). Throws std::invalid_argument for a bad token id or a batch the cache has no room for.
  void run(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention, ThreadPool& pool,
           std::vector<float>& logits, int32_t layers = 0);

  size_t last_attention_scratch_bytes() const { return attention_scratch_bytes_; }
  double last_attention_seconds() const { return attention_seconds_; }  // all layers of the last run()

 private:
  const LlamaModel& model_;
  const LlamaWeights& weights_;
  MatmulOptions matmul_;
  // Activations of the step, (tokens, width) row-major.
  std::vector<float> x_, xb_, q_, k_, v_, att_, gate_, up_, last_;
  std::vector<float> rope_cos_, rope_sin_;  // (tokens, rope_dim / 2)
  std::vector<float> rope_cos_local_, rope_sin_local_;  // the same for gemma3's local layers
  size_t attention_scratch_bytes_ = 0;
  double attention_seconds_ = 0;
};

}  // namespace inferscope
