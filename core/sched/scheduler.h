// The iteration-level FCFS scheduler (Orca's continuous batching, vLLM's scheduler): every step is a
// scheduling point. Running requests decode one token each; then running requests still in prefill
// get their next prompt chunk, and waiting requests are admitted in arrival order, while the step's
// token budget lasts (chunked prefill: decodes first, so a long prompt never stalls anyone's
// tokens). When the KV cache runs out, the newest running request is preempted (its blocks freed,
// recomputed later from its prompt and output). Admission stops at the first waiting request whose
// next chunk does not fit (FCFS) or at max_running. Finished requests free their memory at once.
// The static policy (the pre-Orca baseline) forms a batch only when nothing runs (up to max_running
// requests, as many as fit): the batch then runs until its longest request finishes.
//
// The scheduler sees the cache only through KvCache (allocate / attach_prefix / free): never its
// blocks. It knows no clock and no model: an executor runs each StepPlan and reports the tokens.
#pragma once
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/kv/kv_cache.h"
#include "core/kv/kv_config.h"
#include "core/sched/request.h"
#include "core/sched/scheduler_config.h"
#include "core/spec/verifier.h"

namespace inferscope {

// One request's share of a step: the last n_new tokens of `history` are computed, at positions
// pos0() .. history.size() - 1; when `sample` is set, one next token is picked from the logits of the last.
// A speculating decode also holds `draft_slots` cache slots after its token: the executor may draft
// up to that many tokens there and score them in the same pass.
struct ScheduledSeq {
  RequestId id = 0;
  std::span<const TokenId> history;  // the request's tokens up to this chunk; valid until Scheduler::complete()
  int32_t n_new = 0;
  bool prefill = false;              // computes prompt (or recomputed) tokens rather than one decode token
  bool sample = true;                // the chunk reaches the request's last token (false: a prefill chunk)
  int32_t draft_slots = 0;           // speculative decoding: slots allocated for drafts after history
  bool shadow_draft = false;         // a speculating decode without slots: a free draft is made, not scored
  int32_t cached_tokens = 0;         // admitted in this step: its first tokens found in the prefix cache

  int32_t pos0() const { return static_cast<int32_t>(history.size()) - n_new; }
  std::span<const TokenId> new_tokens() const { return history.last(static_cast<size_t>(n_new)); }
};

struct StepPlan {
  std::vector<ScheduledSeq> seqs;     // decodes (oldest first), then admissions in FCFS order
  std::vector<RequestId> preempted;   // sent back to the waiting queue by this step
  int32_t prefix_queried_tokens = 0;  // prompt tokens of this step's admissions looked up in the prefix cache
  int32_t prefix_cached_tokens = 0;   // of those, tokens found

  bool empty() const { return seqs.empty(); }
  int32_t new_tokens() const;
  int32_t prefill_tokens() const;
  int32_t draft_slots() const;  // slots held for speculative drafts (counted against max_batch_tokens)
};

// The tokens an executor picked for one scheduled sequence (ignored where the sequence does not sample).
struct SampledToken {
  // In order: one token, or a speculative step's accepted drafts and then its own token. An
  // end-of-generation token is not among them.
  std::vector<TokenId> tokens;
  bool end_of_generation = false;  // the request stops after `tokens`
  std::string error;               // sampling failed (e.g. no finite logit): the request ends with this error
  int32_t drafted = 0;             // speculative: draft tokens the step scored
  // Speculative: the drafts the verifier kept (accepted: the K/V the cache keeps), how each emitted
  // token came about, and the refused draft.
  Verification verification{};
  TokenId shadow = -1;             // a shadow draft's first token (-1: none), to set against tokens[0]
};

// What a completed step changed, for the caller's clocks and callbacks.
struct StepOutcome {
  std::vector<RequestId> first_token;  // requests that produced their first output token
  std::vector<RequestId> finished;
  std::vector<std::pair<RequestId, std::string>> failed;  // ended by a sampling error, with its message
  std::vector<int32_t> appended;  // per plan sequence: output tokens it gained (the last ones of its tokens)
};

struct NextDecodes {
  int32_t count = 0;
  std::vector<RequestId> speculating;
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
  Scheduler(KvCache& kv, RequestLimit limit, SchedulerConfig config = {});

  // Takes effect at the next schedule(). Throws std::invalid_argument for negative limits.
  void set_config(const SchedulerConfig& config);
  const SchedulerConfig& config() const { return config_; }
  // Sends every running request back to the waiting queue (recomputed later), e.g. before the
  // cache is replaced. Returns them, oldest first.
  std::vector<RequestId> preempt_all();
  // Moves onto a new cache (nothing may run: preempt_all() first). Waiting requests that no longer
  // fit the new limit are refused (Request::refusal says why) and returned.
  std::vector<RequestId> rebind(KvCache& kv, RequestLimit limit);
  // Ends a request at once between steps (cancelled, a stop string, a failed step): frees its memory
  // (Failed discards it: its K/V may be unwritten). No-op for a request that already ended.
  void finish(RequestId id, StopReason reason);

  // Queues an arrived request; one that could never fit (max_kv_tokens() above the limit) is refused
  // at once, with its reason in Request::refusal. Returns false when refused.
  bool add(Request request);
  // Decides the next step and allocates its KV slots. Empty when nothing can run.
  StepPlan schedule();
  // Applies the executor's tokens (one entry per plan sequence, in plan order): appends them, gives
  // back the draft slots of rejected drafts (the cache keeps the accepted ones), finishes requests
  // that are done and frees their memory.
  StepOutcome complete(const StepPlan& plan, std::span<const SampledToken> sampled);

  // The decodes of the next step: how many, and those that may speculate, oldest first.
  NextDecodes next_decodes() const;
  // The most drafts `id`'s next decode scores (at most SchedulerConfig::spec_tokens).
  void set_max_drafts(RequestId id, int32_t k) { requests_.at(id).max_drafts = k; }

  const Request& request(RequestId id) const { return requests_.at(id); }
  const std::vector<RequestId>& running() const { return running_; }
  const std::deque<RequestId>& waiting() const { return waiting_; }
  bool idle() const { return running_.empty() && waiting_.empty(); }
  bool contains(RequestId id) const { return requests_.contains(id); }
  // Forgets an ended request's record (long-running engines); the id must not be reused.
  void erase(RequestId id);
  int64_t num_preemptions() const { return num_preemptions_; }

 private:
  // Schedules the next n tokens of running request `id` (and `drafts` draft slots when they fit),
  // preempting the newest running requests while the cache is full. False when `id` itself had to
  // be preempted.
  bool schedule_running(RequestId id, int32_t n, StepPlan& plan, int32_t drafts = 0);
  // Whether `r`'s decodes speculate: the engine does and the request may.
  bool speculates(const Request& r) const { return config_.spec_tokens > 0 && r.speculate; }
  // Draft slots for running request `r`'s decode: k, at most what its output limit leaves and what
  // the step's token budget (`left`, including the decode itself) leaves.
  int32_t draft_slots_for(const Request& r, int32_t left) const;
  void preempt_newest(StepPlan& plan);
  // Gives `r` cache room for its first chunk (after any prefix-cache hit) of at most `budget`
  // tokens; false, holding nothing, when it does not fit.
  bool admit(Request& r, int32_t budget, StepPlan& plan);
  void remove_running(RequestId id);

  KvCache* kv_;
  RequestLimit limit_;
  SchedulerConfig config_;
  std::unordered_map<RequestId, Request> requests_;
  std::deque<RequestId> waiting_;   // FCFS; preempted requests go back to the front
  std::vector<RequestId> running_;  // in admission order: the newest is last
  // Set when the head of the queue did not fit: admission is retried only after memory is freed.
  bool admission_blocked_ = false;
  bool static_batch_forming_ = false;  // the static policy may still admit into the current batch
  int64_t num_preemptions_ = 0;
};

}  // namespace inferscope
