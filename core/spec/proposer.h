// What drafts tokens for speculative decoding. Each step, every speculating sequence asks its
// proposer for up to k tokens; the target then scores them all in one forward pass (verifier.h).
// One proposer serves every sequence of the engine: n-gram lookup, a draft model (another file, or
// the target's own weights at a cheaper level), or the target's first layers (early exit).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/kv/kv_cache.h"
#include "core/sample/sampler.h"
#include "core/common/request_id.h"
#include "core/spec/verifier.h"

namespace inferscope {

class Attention;
class ThreadPool;

struct DraftRequest {
  RequestId id = 0;
  std::span<const TokenId> history;  // prompt + output so far; its last token is not in the target's cache yet
  int32_t max_tokens = 0;            // draft at most this many (the target's cache holds their slots)
  Sampler* sampler = nullptr;        // the request's: its chain shapes q, its generator draws the drafts
};

// What a model-based proposer runs on: the target's cache (early exit reads and writes its first
// layers there), the executor's worker threads and attention implementation.
struct ProposeContext {
  KvCache& target_kv;
  ThreadPool& pool;
  Attention& attention;
};

class Proposer {
 public:
  virtual ~Proposer() = default;
  virtual std::string_view name() const = 0;
  // One draft per request, in order (an empty draft: nothing to propose this step).
  virtual void propose(std::span<const DraftRequest> requests, const ProposeContext& context,
                       std::vector<Draft>& drafts) = 0;
  // A request is in the engine (it arrived, or was there when this proposer was built): the first
  // `prompt_tokens` of its history are its prompt, what follows its output.
  virtual void on_added(RequestId /*id*/, int32_t /*prompt_tokens*/) {}
  // The request has ended, or was preempted (`preempted`: it comes back later, recomputed from these
  // same tokens): its tokens so far, prompt then output. Drop what is kept for it (its draft KV).
  virtual void on_removed(RequestId /*id*/, std::span<const TokenId> /*tokens*/, bool /*preempted*/) {}
  // Bytes of KV the proposer holds of its own (a draft model's cache).
  virtual size_t kv_bytes() const { return 0; }
  // Its drafts cost no forward pass: a decode that scores none still gets one, unscored, whose first
  // token measures the acceptance it would have had (one-hot q: accepted with probability p(token),
  // the chance that the step emits that very token).
  virtual bool drafts_cost_nothing() const { return false; }
};

}  // namespace inferscope
