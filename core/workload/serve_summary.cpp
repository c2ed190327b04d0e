#include "core/workload/serve_summary.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "core/engine/metrics_json.h"

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
    s.attention_scratch_bytes_peak = std::max(s.attention_scratch_bytes_peak, static_cast<double>(st.attention_scratch_bytes));
    s.bytes_read += st.weight_bytes_read + st.kv_bytes_read;
  }
  s.flops_per_second = seconds > 0 ? s.flops / seconds : 0.0;
  s.weight_bytes = static_cast<double>(metrics.weight_bytes);
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

const std::vector<ServeFigure>& serve_figures() {
  using U = MetricUnit;
  const char* const usage =
      "Not coloured: more KV in use can mean more requests served at once, or reservations never written "
      "(a contiguous cache counts whole reserved contexts as used); neither is better on its own.";
  static const std::vector<ServeFigure> figures = {
      {"requests_total", [](const ServeSummary& s) { return double(s.requests_total); }, U::Count},
      {"requests_finished", [](const ServeSummary& s) { return double(s.requests_finished); }, U::Count},
      {"requests_refused", [](const ServeSummary& s) { return double(s.requests_refused); }, U::Count},
      {"steps", [](const ServeSummary& s) { return double(s.steps); }, U::Count, {}, Better::Neither, {}, {}, nullptr, true},
      {"duration_s", [](const ServeSummary& s) { return s.duration_s; }, U::Seconds},
      {"tokens_per_second", [](const ServeSummary& s) { return s.tokens_per_second; }, U::TokensPerSecond, "throughput",
       Better::Higher},
      {"time_to_first_token_seconds_p50", [](const ServeSummary& s) { return s.time_to_first_token_seconds_p50; },
       U::Seconds, "TTFT p50", Better::Lower},
      {"time_to_first_token_seconds_p99", [](const ServeSummary& s) { return s.time_to_first_token_seconds_p99; },
       U::Seconds, "TTFT p99", Better::Lower},
      {"e2e_request_latency_seconds_p50", [](const ServeSummary& s) { return s.e2e_request_latency_seconds_p50; },
       U::Seconds, "e2e latency p50", Better::Lower},
      {"e2e_request_latency_seconds_p99", [](const ServeSummary& s) { return s.e2e_request_latency_seconds_p99; },
       U::Seconds},
      {"kv_cache_usage_perc_mean", [](const ServeSummary& s) { return s.kv_cache_usage_perc_mean; }, U::Fraction,
       "KV usage mean", Better::Neither, usage, "kv_cache_usage_perc"},
      {"kv_cache_usage_perc_peak", [](const ServeSummary& s) { return s.kv_cache_usage_perc_peak; }, U::Fraction,
       "KV usage peak", Better::Neither, usage, "kv_cache_usage_perc"},
      {"kv_internal_fragmentation_perc_mean", [](const ServeSummary& s) { return s.kv_internal_fragmentation_perc_mean; },
       U::Fraction, "fragmentation mean", Better::Neither,
       "Not coloured: a contiguous cache reports 0 % fragmentation while most of its reservation goes unused; read it "
       "with reserved-unused.",
       "kv_internal_fragmentation_perc"},
      {"kv_reserved_unused_perc_mean", [](const ServeSummary& s) { return s.kv_reserved_unused_perc_mean; }, U::Fraction,
       "reserved-unused mean", Better::Neither,
       "Not coloured: a paged cache reports 0 % reserved-unused while its last blocks are partly empty; read it with "
       "fragmentation.",
       "kv_reserved_unused_perc"},
      {"max_concurrent_requests", [](const ServeSummary& s) { return double(s.max_concurrent_requests); }, U::Count},
      {"num_requests_running_mean", [](const ServeSummary& s) { return s.num_requests_running_mean; }, U::Count},
      {"num_preemptions", [](const ServeSummary& s) { return double(s.num_preemptions); }, U::Count, "preemptions",
       Better::Lower, {}, "preemptions"},
      {"prefix_cache_queries", [](const ServeSummary& s) { return double(s.prefix_cache_queries); }, U::Tokens, {},
       Better::Neither, {}, "prefix_cache_hit_rate"},
      {"prefix_cache_hits", [](const ServeSummary& s) { return double(s.prefix_cache_hits); }, U::Tokens, {},
       Better::Neither, {}, "prefix_cache_hit_rate"},
      {"prefix_cache_hit_rate", [](const ServeSummary& s) { return s.prefix_cache_hit_rate; }, U::Fraction,
       "prefix hit rate", Better::Higher, {}, "prefix_cache_hit_rate"},
      {"prefill_tokens", [](const ServeSummary& s) { return double(s.prefill_tokens); }, U::Tokens, {}, Better::Neither,
       {}, {}, nullptr, true},
      {"decode_tokens", [](const ServeSummary& s) { return double(s.decode_tokens); }, U::Tokens, {}, Better::Neither,
       {}, {}, nullptr, true},
      {"output_tokens", [](const ServeSummary& s) { return double(s.output_tokens); }, U::Tokens},
      {"flops", [](const ServeSummary& s) { return s.flops; }, U::Flops, {}, Better::Neither, {}, "roofline"},
      {"bytes_read", [](const ServeSummary& s) { return s.bytes_read; }, U::Bytes, {}, Better::Neither, {}, "roofline"},
      {"flops_per_second", [](const ServeSummary& s) { return s.flops_per_second; }, U::FlopsPerSecond, {},
       Better::Neither, {}, "roofline"},
      {"weight_bytes", [](const ServeSummary& s) { return s.weight_bytes; }, U::Bytes, "weight bytes", Better::Neither,
       "Not coloured: fewer weight bytes per step trade precision for speed; judge them by throughput and the outputs.",
       {}, nullptr, true},
      {"attention_scratch_bytes_peak", [](const ServeSummary& s) { return s.attention_scratch_bytes_peak; }, U::Bytes,
       "attention scratch peak", Better::Lower, {}, "attention_scratch_bytes", nullptr, true},
      {"spec_acceptance_rate", [](const ServeSummary& s) { return s.spec.acceptance_rate(); }, U::Fraction,
       "acceptance rate", Better::Neither,
       "Not coloured: a smaller k or a stricter p-min accepts a larger share of fewer drafts; the mean acceptance "
       "length and throughput say what speculation gains.",
       "spec_acceptance", [](const ServeSummary& s) { return s.spec.num_drafts > 0; }},
      {"spec_mean_acceptance_length", [](const ServeSummary& s) { return s.spec.mean_acceptance_length(); }, U::Tokens,
       "mean acceptance length", Better::Higher, {}, "spec_acceptance",
       [](const ServeSummary& s) { return s.spec.num_drafts > 0; }},
  };
  return figures;
}

bool figure_unmeasured(const ServeFigure& f, const EngineMetricsSnapshot& metrics, double value) {
  const std::vector<std::string>& lacking = metrics.not_reported;
  if (!f.reported_as.empty() && std::find(lacking.begin(), lacking.end(), f.reported_as) != lacking.end()) return true;
  return f.zero_is_unmeasured && value == 0 && !metrics.source.empty();
}

nlohmann::json summary_json(const ServeSummary& s) {
  nlohmann::json out = {{"spec_mode", s.spec_mode}, {"spec_decode", spec_json(s.spec)}};
  for (const ServeFigure& f : serve_figures()) out[f.key] = metric_json(f.value(s), f.unit);
  return out;
}

}  // namespace inferscope
