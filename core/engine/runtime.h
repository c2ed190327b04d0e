// One model with its thread pool, KV cache and attention: appends tokens to sequences and returns
// their logits. The single-session path of the CLI (generate, chat, bench, perplexity) runs on it.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/kv/kv_cache.h"
#include "core/kv/kv_config.h"
#include "core/model/llama_forward.h"
#include "core/quant/converted_weights.h"
#include "core/tokenizer/vocab.h"

namespace inferscope {

class Attention;
class LlamaModel;
class ThreadPool;

struct RuntimeOptions {
  int32_t threads = 0;          // 0 = every hardware thread
  DType kv_dtype = DType::F16;  // F16, F32 or Q8_0 (core/kv/kv_dtype.h); the KV cache refuses others
  int32_t context_length = 0;   // 0 = the model's; at most the model's
  int32_t max_sequences = 1;    // sequences the default KV budget holds at full context
  KvKind kv_kind = KvKind::Paged;
  int32_t block_size = 16;      // paged KV: tokens per block
  size_t kv_budget_bytes = 0;   // 0 = max_sequences full contexts
  bool prefix_cache = true;     // paged KV: reuse blocks of an identical prompt prefix
  int32_t prefill_chunk = 512;  // tokens per forward pass while feeding a long prompt
  ActivationPrecision activations = ActivationPrecision::F32;  // how activations meet quantized weights
  std::string attention = "flash";  // "flash" (tiled, online softmax) or "naive" (full score matrix)
  WeightQuant quant = WeightQuant::Native;  // the weights' format; other levels convert at construction
  ConversionProgressFn on_quant_progress = nullptr;  // progress of that conversion (none when empty)
};

// Raised when a sequence would grow past the context length.
class ContextFullError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Runtime {
 public:
  Runtime(const LlamaModel& model, const RuntimeOptions& options);
  ~Runtime();

  const LlamaModel& model() const { return model_; }
  int32_t context_length() const { return context_length_; }
  int32_t threads() const;
  std::string attention() const;  // the implementation in use
  ActivationPrecision activations() const { return activations_; }
  WeightQuant quant() const { return weights_->level(); }
  const ConvertedWeights& weights() const { return *weights_; }  // what the forward pass reads
  const KvCache& kv() const { return *kv_; }

  // Feeds tokens after what `seq` holds; returns the logits after the last one (vocab floats,
  // valid until the next call). Throws ContextFullError (nothing changes) past the context length.
  // A new sequence first re-attaches cached K/V of an identical prompt prefix (paged prefix cache).
  std::span<const float> append(SeqId seq, std::span<const TokenId> tokens);
  // Logits at every position of `tokens` (n x vocab), for perplexity.
  std::span<const float> append_all_logits(SeqId seq, std::span<const TokenId> tokens);
  void reset(SeqId seq);
  const std::vector<TokenId>& tokens(SeqId seq) const;  // everything the sequence holds
  int32_t length(SeqId seq) const { return static_cast<int32_t>(tokens(seq).size()); }
  size_t last_attention_scratch_bytes() const { return forward_.last_attention_scratch_bytes(); }

 private:
  std::span<const float> feed(SeqId seq, std::span<const TokenId> tokens, bool all_logits);
  void discard(SeqId seq);  // after a failed step: drop the sequence and its unfinished K/V
  const LlamaModel& model_;
  int32_t context_length_;
  int32_t prefill_chunk_;
  ActivationPrecision activations_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<ConvertedWeights> weights_;  // before forward_, which reads them
  std::unique_ptr<KvCache> kv_;
  std::unique_ptr<Attention> attention_;
  LlamaForward forward_;
  std::map<SeqId, std::vector<TokenId>> tokens_;
  std::vector<float> logits_, chunk_logits_;
};

}  // namespace inferscope
