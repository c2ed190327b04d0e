#include "core/sched/scheduler.h"

#include <algorithm>
#include <stdexcept>

namespace inferscope {

int32_t StepPlan::new_tokens() const {
  int32_t n = 0;
  for (const ScheduledSeq& s : seqs) n += s.n_new;
  return n;
}

int32_t StepPlan::prefill_tokens() const {
  int32_t n = 0;
  for (const ScheduledSeq& s : seqs) n += s.prefill ? s.n_new : 0;
  return n;
}

RequestLimit request_limit(const KvCache& kv, const KvConfig& config, int32_t context_length) {
  RequestLimit limit;
  if (config.kind == KvKind::Paged) {
    const int32_t blocks = kv.stats().blocks_total;
    limit.max_kv_tokens = blocks * config.block_size;
    limit.why = "the whole paged KV budget (" + std::to_string(blocks) + " blocks of " +
                std::to_string(config.block_size) + " tokens)";
  } else {
    limit.max_kv_tokens = config.max_seq_len;
    limit.why = "one contiguous reservation (max_seq_len " + std::to_string(config.max_seq_len) + ")";
  }
  if (context_length < limit.max_kv_tokens) {
    limit.max_kv_tokens = context_length;
    limit.why = "the model's context length (" + std::to_string(context_length) + ")";
  }
  return limit;
}

Scheduler::Scheduler(KvCache& kv, RequestLimit limit) : kv_(kv), limit_(std::move(limit)) {}

bool Scheduler::add(Request request) {
  if (requests_.contains(request.id)) {
    throw std::invalid_argument("scheduler: request " + std::to_string(request.id) + " was already added");
  }
  if (request.prompt_tokens <= 0 || request.max_output_tokens <= 0 ||
      static_cast<int32_t>(request.tokens.size()) != request.prompt_tokens) {
    throw std::invalid_argument("scheduler: request " + std::to_string(request.id) +
                                " needs a non-empty prompt and at least one output token");
  }
  const RequestId id = request.id;
  const bool fits = request.max_kv_tokens() <= limit_.max_kv_tokens;
  if (fits) {
    request.state = RequestState::Waiting;
    waiting_.push_back(id);
  } else {
    request.state = RequestState::Refused;
    request.refusal = "needs " + std::to_string(request.max_kv_tokens()) + " KV slots (prompt " +
                      std::to_string(request.prompt_tokens) + " + output " +
                      std::to_string(request.max_output_tokens) + " - 1) but one request can hold at most " +
                      std::to_string(limit_.max_kv_tokens) + ": " + limit_.why;
  }
  requests_.emplace(id, std::move(request));
  return fits;
}

StepPlan Scheduler::schedule() {
  StepPlan plan;
  // Decodes first, oldest first: each running request feeds the token it sampled last step.
  for (size_t i = 0; i < running_.size(); ++i) {
    const RequestId id = running_[i];
    if (!allocate_decode(id, plan)) break;  // it was the newest; nothing runs after it
    plan.seqs.push_back(ScheduledSeq{id, requests_.at(id).tokens, 1, false});
  }
  // Admitting right after a preemption would only preempt again (vLLM does the same).
  if (!plan.preempted.empty() || admission_blocked_) return plan;
  while (!waiting_.empty()) {
    Request& r = requests_.at(waiting_.front());
    if (!admit(r, plan)) {
      admission_blocked_ = true;  // FCFS: nobody overtakes the head of the queue
      break;
    }
    waiting_.pop_front();
    running_.push_back(r.id);
    r.state = RequestState::Running;
  }
  return plan;
}

bool Scheduler::allocate_decode(RequestId id, StepPlan& plan) {
  const Request& r = requests_.at(id);
  while (!kv_.allocate(id, 1, std::span(&r.tokens.back(), 1))) {
    const bool self = running_.back() == id;
    preempt_newest(plan);
    if (self) return false;
  }
  return true;
}

void Scheduler::preempt_newest(StepPlan& plan) {
  const RequestId victim = running_.back();
  running_.pop_back();
  // Its K/V are complete (it has not been scheduled in this step), so full blocks stay reusable.
  kv_.free(victim);
  Request& r = requests_.at(victim);
  r.state = RequestState::Waiting;
  ++r.num_preemptions;
  ++num_preemptions_;
  // Preempted requests arrived before everyone waiting: back to the front, oldest first.
  waiting_.push_front(victim);
  plan.preempted.push_back(victim);
  admission_blocked_ = false;
}

bool Scheduler::admit(Request& r, StepPlan& plan) {
  // A preempted request is recomputed from its prompt and the tokens it already generated.
  const std::span<const TokenId> tokens = r.tokens;
  const int32_t cached = kv_.attach_prefix(r.id, tokens);
  const int32_t n_new = static_cast<int32_t>(tokens.size()) - cached;
  if (!kv_.allocate(r.id, n_new, tokens.subspan(static_cast<size_t>(cached)))) {
    kv_.free(r.id);  // lets go of the attached prefix blocks (they stay cached)
    return false;
  }
  plan.seqs.push_back(ScheduledSeq{r.id, tokens, n_new, true});
  plan.prefix_cached_tokens += cached;
  return true;
}

StepOutcome Scheduler::complete(const StepPlan& plan, std::span<const SampledToken> sampled) {
  if (sampled.size() != plan.seqs.size()) {
    throw std::invalid_argument("scheduler: " + std::to_string(sampled.size()) + " sampled tokens for " +
                                std::to_string(plan.seqs.size()) + " scheduled sequences");
  }
  StepOutcome outcome;
  for (size_t i = 0; i < sampled.size(); ++i) {
    Request& r = requests_.at(plan.seqs[i].id);
    if (r.output_tokens() == 0) outcome.first_token.push_back(r.id);
    bool done = sampled[i].end_of_generation;
    if (done) {
      r.stop = StopReason::EndOfGeneration;
    } else {
      r.tokens.push_back(sampled[i].token);
      done = r.output_tokens() >= r.max_output_tokens;
      r.stop = StopReason::Length;
    }
    if (!done) continue;
    kv_.free(r.id);
    running_.erase(std::find(running_.begin(), running_.end(), r.id));
    r.state = RequestState::Finished;
    outcome.finished.push_back(r.id);
    admission_blocked_ = false;
  }
  return outcome;
}

}  // namespace inferscope
