#include "core/sched/scheduler.h"

#include <algorithm>
#include <climits>
#include <stdexcept>

namespace inferscope {

int32_t StepPlan::new_tokens() const {
  int32_t n = 0;
  for (const ScheduledSeq& s : seqs) n += s.n_new;
  return n;
}

int32_t StepPlan::draft_slots() const {
  int32_t n = 0;
  for (const ScheduledSeq& s : seqs) n += s.draft_slots;
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

namespace {

std::string refusal(const Request& r, const RequestLimit& limit) {
  return "needs " + std::to_string(r.max_kv_tokens()) + " KV slots (prompt " + std::to_string(r.prompt_tokens) +
         " + output " + std::to_string(r.max_output_tokens) + " - 1) but one request can hold at most " +
         std::to_string(limit.max_kv_tokens) + ": " + limit.why;
}

int32_t remaining(const Request& r) { return static_cast<int32_t>(r.tokens.size()) - r.num_computed; }

// A decode feeds the one token sampled last step; anything else recomputes prompt (or preempted) tokens.
bool decoding(const Request& r) { return remaining(r) == 1 && r.output_tokens() > 0; }

}  // namespace

Scheduler::Scheduler(KvCache& kv, RequestLimit limit, SchedulerConfig config) : kv_(&kv), limit_(std::move(limit)) {
  set_config(config);
}

void Scheduler::set_config(const SchedulerConfig& config) {
  if (config.max_batch_tokens < 0 || config.max_running < 0) {
    throw std::invalid_argument("scheduler: max_batch_tokens and max_running must be >= 0 (0 = no limit)");
  }
  if (config.spec_tokens < 0 || config.spec_tokens > 16) {
    throw std::invalid_argument("scheduler: spec_tokens must be in 0..16, got " + std::to_string(config.spec_tokens));
  }
  config_ = config;
  admission_blocked_ = false;
}

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
  request.num_computed = 0;
  if (fits) {
    request.state = RequestState::Waiting;
    waiting_.push_back(id);
  } else {
    request.state = RequestState::Refused;
    request.refusal = refusal(request, limit_);
  }
  requests_.emplace(id, std::move(request));
  return fits;
}

StepPlan Scheduler::schedule() {
  StepPlan plan;
  const int32_t budget = config_.max_batch_tokens > 0 ? config_.max_batch_tokens : INT32_MAX;
  // Static: a new batch forms when nothing runs, and keeps forming across steps while only the
  // token budget holds admissions back (a long prompt per step under chunked prefill).
  if (running_.empty()) static_batch_forming_ = true;
  // Tokens the step computes or holds draft slots for, against the budget.
  const auto left = [&] { return budget - plan.new_tokens() - plan.draft_slots(); };
  // Decodes first, oldest first: each running request feeds the token it sampled last step (and,
  // speculating, the drafts the executor will put in its draft slots).
  for (size_t i = 0; i < running_.size(); ++i) {
    const Request& r = requests_.at(running_[i]);
    if (!decoding(r)) continue;
    if (!schedule_running(r.id, 1, plan, draft_slots_for(r, left()))) break;  // it was the newest; nothing runs after it
  }
  // Then the next chunk of every request still in prefill, while the token budget lasts.
  for (size_t i = 0; i < running_.size(); ++i) {
    const Request& r = requests_.at(running_[i]);
    const int32_t left_now = left();
    if (left_now <= 0) break;
    if (decoding(r)) continue;
    if (!schedule_running(r.id, std::min(remaining(r), left_now), plan)) break;
  }
  // Admitting right after a preemption would only preempt again (vLLM does the same).
  if (!plan.preempted.empty() || admission_blocked_) return plan;
  if (config_.policy == SchedulerPolicy::Static && !static_batch_forming_) return plan;
  bool out_of_budget = false;
  while (!waiting_.empty()) {
    const int32_t left_now = left();
    if (left_now <= 0) {
      out_of_budget = true;
      break;
    }
    if (config_.max_running > 0 && static_cast<int32_t>(running_.size()) >= config_.max_running) break;
    Request& r = requests_.at(waiting_.front());
    if (!admit(r, left_now, plan)) {
      admission_blocked_ = true;  // FCFS: nobody overtakes the head of the queue
      break;
    }
    waiting_.pop_front();
    running_.push_back(r.id);
    r.state = RequestState::Running;
  }
  if (!out_of_budget) static_batch_forming_ = false;  // queue empty, max_running reached, or out of memory
  return plan;
}

NextDecodes Scheduler::next_decodes() const {
  NextDecodes next;
  for (RequestId id : running_) {
    const Request& r = requests_.at(id);
    if (!decoding(r)) continue;
    ++next.count;
    if (speculates(r)) next.speculating.push_back(id);
  }
  return next;
}

int32_t Scheduler::draft_slots_for(const Request& r, int32_t left) const {
  if (!speculates(r)) return 0;
  // The step emits at most drafts + 1 tokens, never past the request's output limit.
  const int32_t k = std::min({config_.spec_tokens, r.max_drafts, r.max_output_tokens - r.output_tokens() - 1, left - 1});
  return std::max(k, 0);
}

bool Scheduler::schedule_running(RequestId id, int32_t n, StepPlan& plan, int32_t drafts) {
  Request& r = requests_.at(id);
  const std::span<const TokenId> tokens = r.tokens;
  const std::span<const TokenId> known = tokens.subspan(static_cast<size_t>(r.num_computed), static_cast<size_t>(n));
  // Draft slots only where they fit as things are: speculation never preempts anyone.
  if (drafts > 0 && !kv_->allocate(id, n + drafts, known)) drafts = 0;
  while (drafts == 0 && !kv_->allocate(id, n, known)) {
    const bool self = running_.back() == id;
    preempt_newest(plan);
    if (self) return false;
  }
  const size_t end = static_cast<size_t>(r.num_computed + n);
  ScheduledSeq seq{id, tokens.first(end), n, !decoding(r), end == tokens.size(), drafts};
  seq.shadow_draft = drafts == 0 && decoding(r) && speculates(r);
  plan.seqs.push_back(seq);
  return true;
}

void Scheduler::preempt_newest(StepPlan& plan) {
  const RequestId victim = running_.back();
  running_.pop_back();
  auto planned = std::find_if(plan.seqs.begin(), plan.seqs.end(), [&](const ScheduledSeq& s) { return s.id == victim; });
  if (planned != plan.seqs.end()) {
    // Already planned this step: its new slots will never be written, so forget them.
    plan.seqs.erase(planned);
    kv_->discard(victim);
  } else {
    // Its K/V are complete, so full blocks stay reusable.
    kv_->free(victim);
  }
  Request& r = requests_.at(victim);
  r.state = RequestState::Waiting;
  r.num_computed = 0;
  ++r.num_preemptions;
  ++num_preemptions_;
  // Preempted requests arrived before everyone waiting: back to the front, oldest first.
  waiting_.push_front(victim);
  plan.preempted.push_back(victim);
  admission_blocked_ = false;
}

bool Scheduler::admit(Request& r, int32_t budget, StepPlan& plan) {
  // A preempted request is recomputed from its prompt and the tokens it already generated.
  const std::span<const TokenId> tokens = r.tokens;
  const int32_t cached = kv_->attach_prefix(r.id, tokens);
  const int32_t n_new = std::min(static_cast<int32_t>(tokens.size()) - cached, budget);
  if (!kv_->allocate(r.id, n_new, tokens.subspan(static_cast<size_t>(cached), static_cast<size_t>(n_new)))) {
    kv_->free(r.id);  // lets go of the attached prefix blocks (they stay cached)
    return false;
  }
  r.num_computed = cached;
  const size_t end = static_cast<size_t>(cached + n_new);
  ScheduledSeq seq{r.id, tokens.first(end), n_new, true, end == tokens.size()};
  seq.cached_tokens = cached;
  plan.seqs.push_back(seq);
  plan.prefix_queried_tokens += static_cast<int32_t>(tokens.size());
  plan.prefix_cached_tokens += cached;
  return true;
}

StepOutcome Scheduler::complete(const StepPlan& plan, std::span<const SampledToken> sampled) {
  if (sampled.size() != plan.seqs.size()) {
    throw std::invalid_argument("scheduler: " + std::to_string(sampled.size()) + " sampled tokens for " +
                                std::to_string(plan.seqs.size()) + " scheduled sequences");
  }
  StepOutcome outcome;
  outcome.appended.assign(plan.seqs.size(), 0);
  for (size_t i = 0; i < sampled.size(); ++i) {
    Request& r = requests_.at(plan.seqs[i].id);
    r.num_computed += plan.seqs[i].n_new;
    if (!plan.seqs[i].sample) continue;
    if (!sampled[i].error.empty()) {
      finish(r.id, StopReason::Failed);
      outcome.failed.emplace_back(r.id, sampled[i].error);
      continue;
    }
    const SampledToken& out = sampled[i];
    const bool eog = out.end_of_generation;
    if (out.tokens.empty() && !eog) {
      throw std::invalid_argument("scheduler: the executor gave request " + std::to_string(r.id) + " no token");
    }
    if (plan.seqs[i].draft_slots > 0) {
      // The cache keeps the K/V of the accepted drafts and gives back the slots of the rest.
      int32_t kept = std::clamp(out.verification.accepted, 0, plan.seqs[i].draft_slots);
      if (!eog) kept = std::min(kept, static_cast<int32_t>(out.tokens.size()) - 1);
      r.num_computed += kept;
      kv_->truncate(r.id, r.num_computed);
      kv_->name_tokens(r.id, std::span(out.tokens).first(std::min<size_t>(kept, out.tokens.size())));
    }
    if (r.output_tokens() == 0) outcome.first_token.push_back(r.id);
    for (TokenId t : out.tokens) {
      if (r.output_tokens() >= r.max_output_tokens) break;
      r.tokens.push_back(t);
      ++outcome.appended[i];
    }
    const bool done = eog || r.output_tokens() >= r.max_output_tokens;
    r.stop = eog ? StopReason::EndOfGeneration : StopReason::Length;
    if (!done) continue;
    finish(r.id, r.stop);
    outcome.finished.push_back(r.id);
  }
  return outcome;
}

void Scheduler::remove_running(RequestId id) {
  running_.erase(std::find(running_.begin(), running_.end(), id));
}

void Scheduler::finish(RequestId id, StopReason reason) {
  Request& r = requests_.at(id);
  if (r.state == RequestState::Running) {
    remove_running(id);
    if (reason == StopReason::Failed) {
      kv_->discard(id);
    } else {
      kv_->free(id);
    }
  } else if (r.state == RequestState::Waiting) {
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), id));
  } else {
    return;
  }
  r.state = RequestState::Finished;
  r.stop = reason;
  admission_blocked_ = false;
}

std::vector<RequestId> Scheduler::preempt_all() {
  StepPlan none;
  while (!running_.empty()) preempt_newest(none);
  return {none.preempted.rbegin(), none.preempted.rend()};
}

std::vector<RequestId> Scheduler::rebind(KvCache& kv, RequestLimit limit) {
  if (!running_.empty()) throw std::logic_error("scheduler: rebind while requests run (preempt_all first)");
  kv_ = &kv;
  limit_ = std::move(limit);
  admission_blocked_ = false;
  std::vector<RequestId> refused;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    Request& r = requests_.at(*it);
    if (r.max_kv_tokens() <= limit_.max_kv_tokens) {
      ++it;
      continue;
    }
    r.state = RequestState::Refused;
    r.refusal = refusal(r, limit_);
    refused.push_back(r.id);
    it = waiting_.erase(it);
  }
  return refused;
}

void Scheduler::erase(RequestId id) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  if (it->second.state == RequestState::Waiting || it->second.state == RequestState::Running) {
    throw std::logic_error("scheduler: erase of request " + std::to_string(id) + " that has not ended");
  }
  requests_.erase(it);
}

}  // namespace inferscope
