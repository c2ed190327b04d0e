#include "core/remote/server_report.h"

#include "core/engine/step_metrics.h"

namespace inferscope {
namespace {

int32_t count(const std::optional<double>& v) { return v ? whole_count<int32_t>(*v) : 0; }

}  // namespace

std::string server_address(const RemoteEndpoint& endpoint, const ServerInfo& server) {
  return std::string(server_kind_name(server.kind)) + " at " + endpoint.base_url;
}

std::string remote_source(const RemoteEndpoint& endpoint, const ServerInfo& server) {
  return server_address(endpoint, server) + (endpoint.model.empty() ? "" : " (" + endpoint.model + ")");
}

StepMetrics server_step(const ServerGauges& gauges, const ServerCounters& increase, double time_s, double duration_s) {
  StepMetrics step;
  step.time_s = time_s;
  step.duration_s = duration_s;
  step.num_requests_running = count(gauges.requests_running);
  step.num_requests_waiting = count(gauges.requests_waiting);
  step.prefill_tokens = count(increase.prompt_tokens);
  step.decode_tokens = count(increase.generation_tokens);
  step.kv_cache_usage_perc = gauges.kv_cache_usage.value_or(0);
  step.prefix_cache_queries = count(increase.prefix_cache_queries);
  step.prefix_cache_hits = count(increase.prefix_cache_hits);
  step.spec_draft_tokens = count(increase.spec_draft_tokens);
  step.spec_accepted_tokens = count(increase.spec_accepted_tokens);
  step.server_prefix_hit_rate = gauges.prefix_cache_hit_rate.value_or(-1);
  step.server_spec_accept_rate = gauges.spec_accept_rate.value_or(-1);
  step.server_spec_accept_length = gauges.spec_accept_length.value_or(-1);
  return step;
}

void add_server_totals(EngineMetricsSnapshot& s, const ServerCounters& c) {
  const auto whole = whole_count<int64_t>;
  if (c.prompt_tokens) s.prompt_tokens_total = whole(*c.prompt_tokens);
  if (c.generation_tokens) s.generation_tokens_total = whole(*c.generation_tokens);
  if (c.steps) s.num_steps = whole(*c.steps);
  if (c.preemptions) s.num_preemptions = whole(*c.preemptions);
  if (c.prefix_cache_queries) s.kv.prefix_cache_queries = s.prefix_cache_queries = whole(*c.prefix_cache_queries);
  if (c.prefix_cache_hits) s.kv.prefix_cache_hits = s.prefix_cache_hits = whole(*c.prefix_cache_hits);
  if (c.spec_drafts) {
    s.spec.num_drafts = whole(*c.spec_drafts);
    s.spec.num_draft_tokens = whole(c.spec_draft_tokens.value_or(0));
    s.spec.num_accepted_tokens = whole(c.spec_accepted_tokens.value_or(0));
    s.spec.num_accepted_tokens_per_pos.clear();
    for (double v : c.spec_accepted_per_position) s.spec.num_accepted_tokens_per_pos.push_back(whole(v));
    if (s.spec.num_drafts > 0) s.spec_mode = "server";
  }
}

bool server_speculates(const ServerGauges& g, const ServerCounters& c) {
  // llama-server exports its counters at 0 without a draft model: drafts made are what tell.
  return c.spec_drafts.value_or(0) > 0 || g.spec_accept_rate || g.spec_accept_length;
}

std::vector<std::string> server_not_reported(const ServerGauges& g, const ServerCounters& c) {
  // What no server reports: an engine step's time (its tokens are drawn per scrape interval), the
  // roofline (a panel), and every step metric drawn on the KV waste and attention panels (lines, by
  // their keys).
  std::vector<std::string> out = {"duration_s", "roofline"};
  for (const char* panel : {"kv_waste", "attention"}) {
    for (std::string& key : step_metrics_drawn_on(panel)) out.push_back(std::move(key));
  }
  if (!g.kv_cache_usage) out.push_back("kv_cache_usage_perc");
  if (!c.generation_tokens) out.push_back("decode_tokens_per_second");
  if (!c.prefix_cache_queries && !g.prefix_cache_hit_rate) out.push_back("prefix_cache_hit_rate");
  if (!c.preemptions) out.push_back("preemptions");
  if (!server_speculates(g, c)) out.push_back("spec_acceptance");
  if (c.spec_drafts.value_or(0) <= 0 || c.spec_accepted_per_position.empty()) out.push_back("spec_decode");
  return out;
}

StopReason stop_reason_of(const RemoteReply& reply) {
  if (reply.outcome == RemoteOutcome::Cancelled) return StopReason::Aborted;
  if (reply.outcome == RemoteOutcome::Failed) return StopReason::Failed;
  return reply.finish_reason == "length" ? StopReason::Length : StopReason::EndOfGeneration;
}

}  // namespace inferscope
