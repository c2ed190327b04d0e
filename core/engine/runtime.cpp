#include "core/engine/runtime.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/attention/attention_factory.h"
#include "core/model/llama_model.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {

Runtime::Runtime(const LlamaModel& model, const RuntimeOptions& options)
    : model_(model),
      context_length_(options.context_length > 0 ? std::min(options.context_length, model.config().context_length)
                                                 : model.config().context_length),
      prefill_chunk_(std::max(1, options.prefill_chunk)),
      activations_(options.activations),
      pool_(std::make_unique<ThreadPool>(options.threads)),
      weights_(ConvertedWeights::convert(model, options.quant, *pool_, ConversionControl{options.on_quant_progress})),
      forward_(model, weights_->weights(), MatmulOptions{options.activations}) {
  const KvGeometry geometry = model.kv_geometry(options.kv_dtype);
  KvConfig kv;
  kv.kind = options.kv_kind;
  kv.block_size = options.block_size;
  kv.max_seq_len = context_length_;
  kv.prefix_cache = options.prefix_cache;
  // By default, room for max_sequences whole contexts.
  kv.budget_bytes = options.kv_budget_bytes > 0 ? options.kv_budget_bytes
                                                : kv_budget_for_sequences(geometry, kv, options.max_sequences);
  kv_ = make_kv_cache(geometry, kv);
  attention_ = make_attention(options.attention);
}

Runtime::~Runtime() = default;

int32_t Runtime::threads() const { return pool_->size(); }

std::string Runtime::attention() const { return attention_->name(); }

const std::vector<TokenId>& Runtime::tokens(SeqId seq) const {
  static const std::vector<TokenId> empty;
  auto it = tokens_.find(seq);
  return it == tokens_.end() ? empty : it->second;
}

void Runtime::reset(SeqId seq) {
  kv_->free(seq);
  tokens_.erase(seq);
}

void Runtime::discard(SeqId seq) {
  kv_->discard(seq);
  tokens_.erase(seq);
}

std::span<const float> Runtime::append(SeqId seq, std::span<const TokenId> tokens) {
  return feed(seq, tokens, false);
}

std::span<const float> Runtime::append_all_logits(SeqId seq, std::span<const TokenId> tokens) {
  return feed(seq, tokens, true);
}

std::span<const float> Runtime::feed(SeqId seq, std::span<const TokenId> tokens, bool all_logits) {
  if (tokens.empty()) throw std::invalid_argument("append: no tokens to feed");
  const int32_t held = length(seq);
  if (held + static_cast<int64_t>(tokens.size()) > context_length_) {
    throw ContextFullError("the context is full: " + std::to_string(held) + " + " + std::to_string(tokens.size()) +
                           " tokens exceed the context length of " + std::to_string(context_length_));
  }
  const int32_t vocab = model_.config().vocab_size;
  for (TokenId id : tokens) {
    if (id < 0 || id >= vocab) {
      throw std::invalid_argument("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                                  std::to_string(vocab - 1) + ")");
    }
  }
  logits_.clear();
  if (length(seq) == 0 && !all_logits) {
    // Blocks of an identical prompt prefix may still be cached: reuse their K/V instead of recomputing.
    const int32_t reused = kv_->attach_prefix(seq, tokens);
    tokens_[seq].assign(tokens.begin(), tokens.begin() + reused);
    tokens = tokens.subspan(static_cast<size_t>(reused));
  }
  // Long prompts go through in chunks so activations stay bounded.
  for (size_t begin = 0; begin < tokens.size(); begin += prefill_chunk_) {
    const size_t n = std::min<size_t>(prefill_chunk_, tokens.size() - begin);
    const std::span<const TokenId> chunk = tokens.subspan(begin, n);
    const int32_t pos0 = length(seq);
    if (!kv_->allocate(seq, static_cast<int32_t>(n), chunk)) {
      throw std::runtime_error("the KV cache has no room for " + std::to_string(n) + " more tokens of sequence " +
                               std::to_string(seq) + " (budget " + std::to_string(kv_->stats().budget_bytes) +
                               " bytes)");
    }
    const BatchSeq b{seq, chunk, pos0, all_logits};
    try {
      forward_.run(std::span(&b, 1), *kv_, *attention_, *pool_, chunk_logits_);
    } catch (...) {
      discard(seq);  // the cache holds slots the step never filled: the sequence cannot continue
      throw;
    }
    auto& held_tokens = tokens_[seq];
    held_tokens.insert(held_tokens.end(), chunk.begin(), chunk.end());
    if (all_logits) {
      logits_.insert(logits_.end(), chunk_logits_.begin(), chunk_logits_.end());
    } else if (begin + n == tokens.size()) {
      logits_.assign(chunk_logits_.end() - static_cast<std::ptrdiff_t>(vocab), chunk_logits_.end());
    }
  }
  return logits_;
}

}  // namespace inferscope
