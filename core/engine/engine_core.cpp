#include "core/engine/engine_core.h"

#include <algorithm>
#include <stdexcept>

#include "core/engine/failure_of.h"
#include "core/engine/prompt.h"
#include "core/engine/step_metrics_of.h"
#include "core/model/compute_device.h"
#include "core/model/device_failure.h"
#include "core/model/llama_model.h"

namespace inferscope {
EngineCore::EngineCore(const LlamaModel& model, EngineConfig config, EngineCallbacks callbacks,
                       EngineCoreOptions options)
    : model_(model),
      callbacks_(std::move(callbacks)),
      options_(std::move(options)),
      clock_(options_.dry_run.has_value()),
      metrics_(options_.step_window, options_.finished_window),
      output_(model.tokenizer(), callbacks_, metrics_, clock_),
      reconfigurer_(model, options_, callbacks_.on_logits, parts_, metrics_) {
  reconfigurer_.build(config);
  restart_draft_lengths();
}

EngineCore::~EngineCore() = default;

void EngineCore::restart_draft_lengths() {
  draft_lengths_.reset();
  const SpecConfig& spec = parts_.config.spec;
  if (parts_.proposer && spec.auto_k()) draft_lengths_.emplace(spec.max_k(), parts_.proposer->drafts_cost_nothing());
}

double EngineCore::choose_draft_lengths() {
  const NextDecodes next = parts_.scheduler->next_decodes();
  if (next.speculating.empty()) return -1;
  // A fixed k: every decode may draft all of it (whatever auto chose before a switch).
  const std::vector<int32_t> k = draft_lengths_ ? draft_lengths_->choose(next.speculating, next.count)
                                                : std::vector<int32_t>(next.speculating.size(), parts_.config.spec.max_k());
  double sum = 0;
  for (size_t i = 0; i < k.size(); ++i) {
    parts_.scheduler->set_max_drafts(next.speculating[i], k[i]);
    sum += k[i];
  }
  return sum / static_cast<double>(k.size());
}

void EngineCore::learn_draft_lengths(const StepPlan& plan, const StepResult& result) {
  if (!draft_lengths_) return;
  int32_t drafted = 0;
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const SampledToken& s = result.sampled[i];
    drafted += s.drafted;
    if (!plan.seqs[i].sample || !s.error.empty()) continue;
    if (s.drafted > 0) {
      draft_lengths_->on_verified(plan.seqs[i].id, s.drafted, s.verification.accepted);
    } else if (s.shadow >= 0 && !s.tokens.empty()) {
      draft_lengths_->on_shadow(plan.seqs[i].id, s.tokens.front() == s.shadow);
    }
  }
  if (plan.prefill_tokens() == 0) draft_lengths_->on_decode_step(plan.new_tokens() + drafted, result.seconds);
}

void EngineCore::apply_config(const EngineConfig& requested) { reconfigured(reconfigurer_.apply(requested)); }

void EngineCore::reconfigured(Reconfigured done) {
  if (done.applied) restart_draft_lengths();  // a new cache, device, attention or proposer: steps cost what they cost now
  // Last, so their callbacks see the engine in its new state.
  for (RequestId id : done.refused) end(id, StopReason::Failed, parts_.scheduler->request(id).refusal);
  report_config(done.applied, done.note);
}

void EngineCore::report_config(bool applied, const std::string& note) const {
  // Concerns no request: what the callback throws has nothing to fail, and goes no further.
  if (callbacks_.on_config) failure_of([&] { callbacks_.on_config(applied, note); });
}

void EngineCore::add(RequestId id, EngineRequest request, double arrival_s) {
  const double t = arrival_s >= 0 ? arrival_s : now();
  Request r;
  r.id = id;
  r.arrival_s = t;
  try {
    r.tokens = encode_request(model_, request);
  } catch (const std::exception& e) {
    return reject(id, t, 0, std::string("bad prompt: ") + e.what());
  }
  try {
    validate_sampling(request.sampling);  // the executor's sampler would throw it at the engine's loop
  } catch (const std::invalid_argument& e) {
    return reject(id, t, static_cast<int32_t>(r.tokens.size()), std::string("bad sampling: ") + e.what());
  }
  r.prompt_tokens = static_cast<int32_t>(r.tokens.size());
  const RequestLimit& limit = parts_.limit;
  if (r.prompt_tokens > limit.max_kv_tokens) {
    return reject(id, t, r.prompt_tokens,
                  "the prompt of " + std::to_string(r.prompt_tokens) +
                      " tokens leaves no room to generate: one request holds at most " +
                      std::to_string(limit.max_kv_tokens) + " tokens (" + limit.why + ")");
  }
  const int32_t room = limit.max_kv_tokens - r.prompt_tokens + 1;  // the last sampled token is never fed back
  const bool to_room = request.max_tokens <= 0 || (request.up_to_context && request.max_tokens > room);
  r.max_output_tokens = to_room ? room : request.max_tokens;
  // Every prompt logit a request asks for comes once, so it never scores drafts it may reject.
  r.speculate = request.speculate && request.logits != LogitsOutput::All;
  r.client = request.client;
  parts_.executor->set_sampling(id, request.sampling);
  parts_.executor->set_logits_output(
      id, callbacks_.on_logits ? WantedLogits{request.logits, request.logits_from} : WantedLogits{});
  metrics_.on_arrival(id, t, r.prompt_tokens, r.client);
  output_.add(id, std::move(request.stop), t);
  if (parts_.proposer) parts_.proposer->on_added(id, r.prompt_tokens);
  if (!parts_.scheduler->add(std::move(r))) end(id, StopReason::Failed, parts_.scheduler->request(id).refusal);
}

void EngineCore::cancel(RequestId id) {
  if (output_.contains(id)) end(id, StopReason::Aborted);
}

void EngineCore::abort_all() {
  while (!output_.empty()) end(output_.first(), StopReason::Aborted);
}

void EngineCore::abort_unstarted(RequestId id) { report_end(id, StopReason::Aborted, {}); }

KvSnapshot EngineCore::kv_snapshot() const {
  KvSnapshot snap = parts_.kv->snapshot();
  for (KvSnapshot::Sequence& seq : snap.sequences) {
    if (!parts_.scheduler->contains(seq.id)) continue;
    const std::vector<TokenId>& tokens = parts_.scheduler->request(seq.id).tokens;
    seq.tokens.assign(tokens.begin(), tokens.begin() + std::min<ptrdiff_t>(std::ssize(tokens), seq.length));
    seq.client = parts_.scheduler->request(seq.id).client;
  }
  return snap;
}

StepCostModel EngineCore::step_cost_model() const {
  return StepCostModel(model_.config(), parts_.weights->weights(), parts_.kv->geometry().bytes_per_token());
}

void EngineCore::step() {
  if (parts_.conversion && parts_.conversion->done()) reconfigured(reconfigurer_.finish_conversion());
  Scheduler& scheduler = *parts_.scheduler;
  if (scheduler.idle()) return;
  // schedule
  StepPlan plan;
  double chosen_k = -1;
  if (const auto failure = failure_of([&] {
        if (options_.test_fault) options_.test_fault("schedule");
        chosen_k = choose_draft_lengths();
        plan = scheduler.schedule();
      })) {
    return fail_running_after_lost_plan("scheduling failed: " + *failure);
  }
  metrics_.on_preempted(static_cast<int64_t>(plan.preempted.size()));
  if (parts_.proposer) {
    for (RequestId id : plan.preempted) parts_.proposer->on_removed(id, scheduler.request(id).tokens, true);
  }
  if (plan.empty()) {
    // Never expected (one request always fits an empty cache): fail the stuck head rather than spin.
    if (scheduler.running().empty() && !scheduler.waiting().empty()) {
      end(scheduler.waiting().front(), StopReason::Failed, "the scheduler could not place this request");
    }
    return;
  }
  const double started = now();
  for (const ScheduledSeq& s : plan.seqs) metrics_.on_scheduled(s.id, started);
  const KvStats during = parts_.kv->stats();  // what the step holds, before finished requests let go
  // execute
  StepResult result;
  std::optional<bool> device_lost;  // set when the device failed: whether its context is gone
  if (const auto failure = failure_of([&] {
        try {
          result = parts_.executor->execute(plan);
        } catch (const DeviceFailure& e) {
          device_lost = e.device_lost();
          throw;
        }
      })) {
    // The step's sequences hold slots never written: drop them; everyone else goes on (on the CPU
    // when the device is lost or keeps failing, else on the device).
    const bool to_cpu = device_lost && (*device_lost || ++device_step_failures_ >= kDeviceStepFailuresBeforeCpu);
    const bool stays = device_lost && !to_cpu;
    fail_scheduled(plan, "step failed: " + *failure +
                             (stays ? " (the engine stays on " + compute_device_name(parts_.config.device) + ")" : ""));
    if (to_cpu) {
      const std::string why = *device_lost ? *failure
                                           : *failure + " (" + std::to_string(device_step_failures_) +
                                                 " steps in a row failed there)";
      device_step_failures_ = 0;
      reconfigured(reconfigurer_.fall_back_to_cpu(why));
    }
    return;
  }
  device_step_failures_ = 0;
  clock_.advance(result.seconds);
  learn_draft_lengths(plan, result);
  // complete
  StepOutcome outcome;
  if (const auto failure = failure_of([&] {
        if (options_.test_fault) options_.test_fault("complete");
        outcome = scheduler.complete(plan, result.sampled);
      })) {
    // complete() may have applied part of the step: its requests end; everyone else goes on.
    return fail_scheduled(plan, "completing the step failed: " + *failure);
  }
  // stream
  stream_step(plan, result, outcome);
  // record
  const double ended = now();
  const StepContext context{ended, clock_.is_virtual() ? result.seconds : ended - started, chosen_k, during,
                            static_cast<int32_t>(scheduler.waiting().size())};
  metrics_.on_step(step_metrics_of(plan, result, step_cost_model(), context));
  metrics_.set_device_memory(result.device_memory);
  publish_occupancy();
}

void EngineCore::stream_step(const StepPlan& plan, const StepResult& result, const StepOutcome& outcome) {
  const Scheduler& scheduler = *parts_.scheduler;
  for (const auto& [id, error] : outcome.failed) end(id, StopReason::Failed, "sampling failed: " + error);
  std::vector<RequestId> stopped;
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const SampledToken& sampled = result.sampled[i];
    if (!plan.seqs[i].sample || !sampled.error.empty()) continue;
    const RequestId id = plan.seqs[i].id;
    metrics_.on_spec(id, sampled.drafted, sampled.verification.accepted);
    // The step's tokens and the one before them, copied: a callback may end the request.
    const std::vector<TokenId>& tokens = scheduler.request(id).tokens;
    const std::vector<TokenId> shown(tokens.end() - outcome.appended[i] - 1, tokens.end());
    bool stop = false;
    // A throwing on_verify or on_token callback ends its own request only.
    if (const auto failure = failure_of([&] {
          if (sampled.drafted > 0 && callbacks_.on_verify) callbacks_.on_verify(id, sampled.verification);
          stop = output_.stream(id, shown, 1);
        })) {
      if (output_.contains(id)) end(id, StopReason::Failed, "on_token callback failed: " + *failure);
    } else if (stop) {
      stopped.push_back(id);
    }
  }
  for (RequestId id : stopped) {
    if (output_.contains(id)) end(id, StopReason::StopString);
  }
  for (RequestId id : outcome.finished) {
    if (output_.contains(id)) end(id, scheduler.request(id).stop);
  }
}

void EngineCore::reject(RequestId id, double arrival_s, int32_t prompt_tokens, const std::string& message) {
  metrics_.on_arrival(id, arrival_s, prompt_tokens);
  metrics_.on_finished(id, now(), stop_reason_name(StopReason::Failed), 0);
  report_end(id, StopReason::Failed, message);
}

void EngineCore::end(RequestId id, StopReason reason, std::string error) {
  if (output_.contains(id) && reason != StopReason::Failed) {
    // Text held back for a possible stop string or an unfinished character comes out now; a callback
    // that cannot take it fails its request instead.
    if (const auto failure = failure_of([&] { output_.flush(id); })) {
      reason = StopReason::Failed;
      error = "on_token callback failed: " + *failure;
    }
  }
  Scheduler& scheduler = *parts_.scheduler;
  scheduler.finish(id, reason);
  if (draft_lengths_) draft_lengths_->forget(id);
  if (parts_.proposer) parts_.proposer->on_removed(id, scheduler.request(id).tokens, false);
  metrics_.on_finished(id, now(), stop_reason_name(reason), scheduler.request(id).num_preemptions);
  parts_.executor->forget(id);
  scheduler.erase(id);
  output_.erase(id);
  publish_occupancy();  // a snapshot taken in the callbacks below already counts this request as gone, and its blocks free
  report_end(id, reason, error);
}

void EngineCore::report_end(RequestId id, StopReason reason, const std::string& error) const {
  // The request is gone by now: what these callbacks throw has no request left to fail, and goes no further.
  if (!error.empty() && callbacks_.on_error) failure_of([&] { callbacks_.on_error(id, error); });
  if (callbacks_.on_finished) failure_of([&] { callbacks_.on_finished(id, reason); });
}

void EngineCore::fail_scheduled(const StepPlan& plan, const std::string& message) {
  for (const ScheduledSeq& s : plan.seqs) {
    if (output_.contains(s.id)) end(s.id, StopReason::Failed, message);
  }
}

void EngineCore::fail_running_after_lost_plan(const std::string& message) {
  // Which requests it was scheduling went with the plan: every running one ends (any may hold
  // unwritten slots), and waiting ones let go of any slots a half-done admission gave them.
  const std::vector<RequestId> running = parts_.scheduler->running();
  for (RequestId id : running) end(id, StopReason::Failed, message);
  for (RequestId id : parts_.scheduler->waiting()) parts_.kv->discard(id);
}

void EngineCore::publish_occupancy() {
  metrics_.set_kv(parts_.kv->stats());
  metrics_.set_queue(static_cast<int32_t>(parts_.scheduler->running().size()),
                     static_cast<int32_t>(parts_.scheduler->waiting().size()));
}

}  // namespace inferscope
