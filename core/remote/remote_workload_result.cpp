#include "core/remote/remote_workload_result.h"

#include "core/remote/server_report.h"

namespace inferscope {

RequestMetrics request_metrics_of(const RemoteRequestResult& r) {
  const RemoteReply& reply = r.reply;
  const double wait = r.sent_s - r.arrival_s;  // waiting for a client slot counts, as queueing does locally
  RequestMetrics m;
  m.id = r.id;
  m.arrival_s = r.arrival_s;
  if (reply.timing.time_to_first_token_s >= 0) m.time_to_first_token_seconds = wait + reply.timing.time_to_first_token_s;
  m.e2e_request_latency_seconds = wait + reply.timing.e2e_s;
  m.inter_token_latency_seconds = reply.timing.chunk_gaps_s;
  if (reply.usage) {
    m.prompt_tokens = static_cast<int32_t>(reply.usage->prompt_tokens);
    m.generation_tokens = static_cast<int32_t>(reply.usage->completion_tokens);
  }
  m.finish_reason = stop_reason_name(stop_reason_of(reply));
  m.last_token_s = r.arrival_s + m.e2e_request_latency_seconds;
  return m;
}

WorkloadResult workload_result_of(const RemoteWorkloadResult& result, const RemoteEndpoint& endpoint, const ServerInfo& server) {
  WorkloadResult out;
  out.duration_s = result.duration_s;
  out.server_metrics_error = result.metrics_error;
  EngineMetricsSnapshot& m = out.metrics;
  m.uptime_s = result.duration_s;
  m.source = remote_source(endpoint, server);
  m.weights_quant = "server";
  ServerGauges seen;  // each gauge any sample had (its value unused)
  double previous_s = 0;
  for (const ServerSample& sample : result.samples) {
    for (auto field : {&ServerGauges::kv_cache_usage, &ServerGauges::prefix_cache_hit_rate, &ServerGauges::spec_accept_rate}) {
      if (sample.gauges.*field) seen.*field = sample.gauges.*field;
    }
    // A sample with nothing running is an idle gap between arrivals: the local engine has no step there.
    if (sample.gauges.requests_running.value_or(1) > 0) {
      m.steps.push_back(server_step(sample.gauges, ServerCounters{}, sample.time_s, sample.time_s - previous_s));
    }
    previous_s = sample.time_s;
  }
  for (const RemoteRequestResult& r : result.requests) {
    m.requests.push_back(request_metrics_of(r));
    m.prompt_tokens_total += m.requests.back().prompt_tokens;
    m.generation_tokens_total += m.requests.back().generation_tokens;
    m.requests_finished += r.reply.outcome == RemoteOutcome::Finished;
    WorkloadOutput o;
    o.id = r.id;
    o.text = r.reply.text;
    o.finish_reason = m.requests.back().finish_reason;
    o.error = r.reply.error;
    out.outputs.push_back(std::move(o));
  }
  const ServerCounters counters = result.counters.value_or(ServerCounters{});
  add_server_totals(m, counters);
  m.not_reported = server_not_reported(seen, counters);
  m.not_reported.push_back("tokens_per_step");  // the samples carry no token counts
  out.summary = summarize(m, result.duration_s);
  // The steps are gauge samples without token counts: the server's counters give the run's tokens.
  out.summary.prefill_tokens = static_cast<int64_t>(counters.prompt_tokens.value_or(0));
  out.summary.decode_tokens = static_cast<int64_t>(counters.generation_tokens.value_or(0));
  return out;
}

}  // namespace inferscope
