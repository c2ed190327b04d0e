#include "core/engine/step_metrics_of.h"

namespace inferscope {

StepMetrics step_metrics_of(const StepPlan& plan, const StepResult& result, const StepCostModel& cost,
                            const StepContext& context) {
  StepMetrics m;
  std::vector<int32_t> drafted(plan.seqs.size(), 0);
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const ScheduledSeq& s = plan.seqs[i];
    const SampledToken& sampled = result.sampled[i];
    drafted[i] = sampled.drafted;
    m.sequences.push_back({s.id, s.prefill ? s.n_new : 0, s.prefill ? 0 : s.n_new + drafted[i], s.cached_tokens});
    if (!s.sample || !sampled.error.empty()) continue;
    m.spec_draft_tokens += sampled.drafted;
    m.spec_accepted_tokens += sampled.verification.accepted;
  }
  m.spec_chosen_k = context.chosen_k;
  m.draft_seconds = result.spec.draft_seconds;
  m.verify_seconds = result.spec.verify_seconds;
  m.time_s = context.ended_s;
  m.duration_s = context.duration_s;
  m.num_requests_running = static_cast<int32_t>(plan.seqs.size());
  m.num_requests_waiting = context.waiting;
  m.prefill_tokens = plan.prefill_tokens();
  // Decode tokens computed: each decode's own token and the drafts it scored.
  m.decode_tokens = plan.new_tokens() - plan.prefill_tokens() + m.spec_draft_tokens;
  m.kv_cache_usage_perc = context.during.kv_cache_usage_perc();
  m.kv_internal_fragmentation_perc = context.during.kv_internal_fragmentation_perc();
  m.kv_reserved_unused_perc = context.during.kv_reserved_unused_perc();
  m.attention_scratch_bytes = result.forward.attention_scratch_bytes;
  m.attention_seconds = result.forward.attention_seconds;
  m.matmul_seconds = result.forward.matmul_seconds;
  m.prefix_cache_queries = plan.prefix_queried_tokens;
  m.prefix_cache_hits = plan.prefix_cached_tokens;
  const StepCost step = cost.step(plan, drafted);
  m.flops = step.flops();
  m.weight_bytes_read = step.weight_bytes;
  m.kv_bytes_read = step.kv_bytes;
  m.preempted = plan.preempted;
  m.pool_dispatches = result.pool_dispatches;
  return m;
}

}  // namespace inferscope
