#include "core/workload/serve_summary.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace inferscope {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (at - static_cast<double>(lo));
}

ServeSummary summarize(const EngineMetricsSnapshot& metrics, double duration_s) {
  ServeSummary s;
  s.steps = metrics.num_steps;
  s.duration_s = duration_s;
  s.num_preemptions = metrics.num_preemptions;
  s.prefix_cache_queries = metrics.prefix_cache_queries;
  s.prefix_cache_hits = metrics.prefix_cache_hits;
  s.spec_mode = metrics.spec_mode;
  s.spec = metrics.spec;
  s.prefix_cache_hit_rate = s.prefix_cache_queries > 0 ? static_cast<double>(s.prefix_cache_hits) /
                                                             static_cast<double>(s.prefix_cache_queries)
                                                       : 0.0;
  double seconds = 0, usage = 0, fragmentation = 0, reserved_unused = 0, running = 0;  // value x seconds
  for (const StepMetrics& st : metrics.steps) {
    seconds += st.duration_s;
    usage += st.kv_cache_usage_perc * st.duration_s;
    fragmentation += st.kv_internal_fragmentation_perc * st.duration_s;
    reserved_unused += st.kv_reserved_unused_perc * st.duration_s;
    running += st.num_requests_running * st.duration_s;
    s.kv_cache_usage_perc_peak = std::max(s.kv_cache_usage_perc_peak, st.kv_cache_usage_perc);
    s.max_concurrent_requests = std::max(s.max_concurrent_requests, st.num_requests_running);
    s.prefill_tokens += st.prefill_tokens;
    s.decode_tokens += st.decode_tokens;
    s.flops += st.flops;
    s.bytes_read += st.weight_bytes_read + st.kv_bytes_read;
  }
  s.flops_per_second = seconds > 0 ? s.flops / seconds : 0.0;
  const auto mean = [&](double weighted) { return seconds > 0 ? weighted / seconds : 0.0; };
  s.kv_cache_usage_perc_mean = mean(usage);
  s.kv_internal_fragmentation_perc_mean = mean(fragmentation);
  s.kv_reserved_unused_perc_mean = mean(reserved_unused);
  s.num_requests_running_mean = mean(running);
  std::vector<double> ttft, e2e;
  for (const RequestMetrics& r : metrics.requests) {
    ++s.requests_total;
    if (r.finish_reason == "error") ++s.requests_refused;
    if (r.time_to_first_token_seconds >= 0) ttft.push_back(r.time_to_first_token_seconds);
    if (r.finish_reason != "stop" && r.finish_reason != "length") continue;
    ++s.requests_finished;
    s.output_tokens += r.generation_tokens;
    e2e.push_back(r.e2e_request_latency_seconds);
  }
  s.tokens_per_second = duration_s > 0 ? static_cast<double>(s.output_tokens) / duration_s : 0.0;
  s.time_to_first_token_seconds_p50 = quantile(ttft, 0.50);
  s.time_to_first_token_seconds_p99 = quantile(ttft, 0.99);
  s.e2e_request_latency_seconds_p50 = quantile(e2e, 0.50);
  s.e2e_request_latency_seconds_p99 = quantile(e2e, 0.99);
  return s;
}

nlohmann::json summary_json(const ServeSummary& s) {
  return {
      {"requests_total", s.requests_total},
      {"requests_finished", s.requests_finished},
      {"requests_refused", s.requests_refused},
      {"steps", s.steps},
      {"duration_s", s.duration_s},
      {"kv_cache_usage_perc_peak", s.kv_cache_usage_perc_peak},
      {"kv_cache_usage_perc_mean", s.kv_cache_usage_perc_mean},
      {"kv_internal_fragmentation_perc_mean", s.kv_internal_fragmentation_perc_mean},
      {"kv_reserved_unused_perc_mean", s.kv_reserved_unused_perc_mean},
      {"max_concurrent_requests", s.max_concurrent_requests},
      {"num_requests_running_mean", s.num_requests_running_mean},
      {"num_preemptions", s.num_preemptions},
      {"prefix_cache_queries", s.prefix_cache_queries},
      {"prefix_cache_hits", s.prefix_cache_hits},
      {"prefix_cache_hit_rate", s.prefix_cache_hit_rate},
      {"prefill_tokens", s.prefill_tokens},
      {"decode_tokens", s.decode_tokens},
      {"output_tokens", s.output_tokens},
      {"flops", s.flops},
      {"bytes_read", s.bytes_read},
      {"flops_per_second", s.flops_per_second},
      {"tokens_per_second", s.tokens_per_second},
      {"time_to_first_token_seconds_p50", s.time_to_first_token_seconds_p50},
      {"time_to_first_token_seconds_p99", s.time_to_first_token_seconds_p99},
      {"e2e_request_latency_seconds_p50", s.e2e_request_latency_seconds_p50},
      {"e2e_request_latency_seconds_p99", s.e2e_request_latency_seconds_p99},
      {"spec_mode", s.spec_mode},
      {"spec_decode", spec_json(s.spec)},
  };
}

}  // namespace inferscope
