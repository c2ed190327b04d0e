// The iteration-level FCFS scheduler (Orca's continuous batching, vLLM's scheduler): every step is a
// scheduling point. Running requests decode one token each; when the KV cache runs out, the newest
// running request is preempted (its blocks freed, recomputed later from its prompt and output);
// then waiting requests are admitted in arrival order while their whole remaining prompt fits,
// stopping at the first that does not (FCFS). Finished requests free their memory at once.
//
// The scheduler sees the cache only through KvCache (allocate / attach_prefix / free): never its
// blocks. It knows no clock and no model: an executor runs each StepPlan and reports the tokens.
#pragma once
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/kv/kv_cache.h"
#include "core/kv/kv_config.h"
#include "core/sched/request.h"

namespace inferscope {

// One request's share of a step: the last n_new tokens of `history` are computed, at positions
// pos0() .. history.size() - 1, and one next token is picked from the logits of the last.
struct ScheduledSeq {
  RequestId id = 0;
  std::span<const TokenId> history;  // the request's tokens so far; valid until Scheduler::complete()
  int32_t n_new = 0;
  bool prefill = false;              // admitted this step (its whole uncached prompt) rather than a decode

  int32_t pos0() const { return static_cast<int32_t>(history.size()) - n_new; }
  std::span<const TokenId> new_tokens() const { return history.last(static_cast<size_t>(n_new)); }
};

struct StepPlan {
  std::vector<ScheduledSeq> seqs;     // decodes (oldest first), then admissions in FCFS order
  std::vector<RequestId> preempted;   // sent back to the waiting queue by this step
  int32_t prefix_cached_tokens = 0;   // prompt tokens of this step's admissions found in the prefix cache

  bool empty() const { return seqs.empty(); }
  int32_t new_tokens() const;
  int32_t prefill_tokens() const;
};

// The token an executor picked for one scheduled sequence.
struct SampledToken {
  TokenId token = 0;
  bool end_of_generation = false;  // the request stops here; the token is not part of its output
};

// What a completed step changed, for the caller's clocks and callbacks.
struct StepOutcome {
  std::vector<RequestId> first_token;  // requests that produced their first output token
  std::vector<RequestId> finished;
};

// The most KV slots one request may hold, and what sets that limit (for refusal messages).
struct RequestLimit {
  int32_t max_kv_tokens = 0;
  std::string why;
};
// Paged: the whole pool; contiguous: one reservation (max_seq_len); both at most the model's context.
RequestLimit request_limit(const KvCache& kv, const KvConfig& config, int32_t context_length);

class Scheduler {
 public:
  Scheduler(KvCache& kv, RequestLimit limit);

  // Queues an arrived request; one that could never fit (max_kv_tokens() above the limit) is refused
  // at once, with its reason in Request::refusal. Returns false when refused.
  bool add(Request request);
  // Decides the next step and allocates its KV slots. Empty when nothing can run.
  StepPlan schedule();
  // Applies the executor's tokens (one per plan sequence, in plan order): appends them, finishes
  // requests that are done and frees their memory.
  StepOutcome complete(const StepPlan& plan, std::span<const SampledToken> sampled);

  const Request& request(RequestId id) const { return requests_.at(id); }
  const std::vector<RequestId>& running() const { return running_; }
  const std::deque<RequestId>& waiting() const { return waiting_; }
  bool idle() const { return running_.empty() && waiting_.empty(); }
  int64_t num_preemptions() const { return num_preemptions_; }

 private:
  // Makes room for one decode token of `id`, preempting the newest running requests while the cache
  // is full. False when `id` itself had to be preempted.
  bool allocate_decode(RequestId id, StepPlan& plan);
  void preempt_newest(StepPlan& plan);
  // Gives `r` cache room for its uncached tokens (after any prefix-cache hit); false, holding
  // nothing, when they do not fit.
  bool admit(Request& r, StepPlan& plan);

  KvCache& kv_;
  RequestLimit limit_;
  std::unordered_map<RequestId, Request> requests_;
  std::deque<RequestId> waiting_;   // FCFS; preempted requests go back to the front
  std::vector<RequestId> running_;  // in admission order: the newest is last
  // Set when the head of the queue did not fit: admission is retried only after memory is freed.
  bool admission_blocked_ = false;
  int64_t num_preemptions_ = 0;
};

}  // namespace inferscope
