#include "core/engine/runtime.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/attention/naive_attention.h"
#include "core/kv/contiguous_kv_cache.h"
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
      forward_(model, MatmulOptions{options.activations}) {
  if (options.kv_dtype != DType::F16 && options.kv_dtype != DType::F32) {
    throw std::invalid_argument("KV cache dtype must be f16 or f32, not " + std::string(dtype_name(options.kv_dtype)));
  }
  const KvGeometry geometry = model.kv_geometry(options.kv_dtype);
  const size_t budget = geometry.bytes_per_token() * context_length_ * std::max(1, options.max_sequences);
  kv_ = std::make_unique<ContiguousKvCache>(geometry, context_length_, budget);
  attention_ = std::make_unique<NaiveAttention>();
}

Runtime::~Runtime() = default;

int32_t Runtime::threads() const { return pool_->size(); }

const std::vector<TokenId>& Runtime::tokens(SeqId seq) const {
  static const std::vector<TokenId> empty;
  auto it = tokens_.find(seq);
  return it == tokens_.end() ? empty : it->second;
}

void Runtime::reset(SeqId seq) {
  kv_->free(seq);
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
  // Long prompts go through in chunks so activations stay bounded.
  for (size_t begin = 0; begin < tokens.size(); begin += prefill_chunk_) {
    const size_t n = std::min<size_t>(prefill_chunk_, tokens.size() - begin);
    const std::span<const TokenId> chunk = tokens.subspan(begin, n);
    const int32_t pos0 = length(seq);
    if (!kv_->allocate(seq, static_cast<int32_t>(n))) {
      throw std::runtime_error("the KV cache has no room for sequence " + std::to_string(seq));
    }
    const BatchSeq b{seq, chunk, pos0, all_logits};
    try {
      forward_.run(std::span(&b, 1), *kv_, *attention_, *pool_, chunk_logits_);
    } catch (...) {
      reset(seq);  // the cache holds slots the step never filled: the sequence cannot continue
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
