#include "core/sched/serve_metrics.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace inferscope {

void ServeMetrics::record_step(const KvStats& kv, const StepPlan& plan, double duration_s) {
  ++steps_;
  weighted_s_ += duration_s;
  usage_s_ += kv.kv_cache_usage_perc() * duration_s;
  fragmentation_s_ += kv.kv_internal_fragmentation_perc() * duration_s;
  reserved_unused_s_ += kv.kv_reserved_unused_perc() * duration_s;
  running_s_ += static_cast<double>(plan.seqs.size()) * duration_s;
  usage_peak_ = std::max(usage_peak_, kv.kv_cache_usage_perc());
  max_running_ = std::max(max_running_, static_cast<int32_t>(plan.seqs.size()));
  prefill_tokens_ += plan.prefill_tokens();
  // Counted per admission: a request retried while memory was short is looked up once here.
  prefix_queries_ += plan.prefix_queried_tokens;
  prefix_hits_ += plan.prefix_cached_tokens;
  decode_tokens_ += plan.new_tokens() - plan.prefill_tokens();
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (at - static_cast<double>(lo));
}

ServeSummary ServeMetrics::summary(std::span<const ServeRequestResult> results, int64_t num_preemptions,
                                   double duration_s) const {
  ServeSummary s;
  s.steps = steps_;
  s.duration_s = duration_s;
  // Every step takes time (the dry run's cost model refuses zero), so weighted_s_ > 0 after a step.
  const auto mean = [&](double weighted) { return weighted_s_ > 0 ? weighted / weighted_s_ : 0.0; };
  s.kv_cache_usage_perc_peak = usage_peak_;
  s.kv_cache_usage_perc_mean = mean(usage_s_);
  s.kv_internal_fragmentation_perc_mean = mean(fragmentation_s_);
  s.kv_reserved_unused_perc_mean = mean(reserved_unused_s_);
  s.num_requests_running_mean = mean(running_s_);
  s.max_concurrent_requests = max_running_;
  s.num_preemptions = num_preemptions;
  s.prefix_cache_queries = prefix_queries_;
  s.prefix_cache_hits = prefix_hits_;
  s.prefix_cache_hit_rate =
      prefix_queries_ > 0 ? static_cast<double>(prefix_hits_) / static_cast<double>(prefix_queries_) : 0.0;
  s.prefill_tokens = prefill_tokens_;
  s.decode_tokens = decode_tokens_;
  std::vector<double> ttft, e2e;
  for (const ServeRequestResult& r : results) {
    ++s.requests_total;
    if (r.request.state == RequestState::Refused) ++s.requests_refused;
    if (r.first_token_s >= 0) ttft.push_back(r.first_token_s - r.request.arrival_s);
    if (r.request.state != RequestState::Finished) continue;
    ++s.requests_finished;
    s.output_tokens += r.request.output_tokens();
    e2e.push_back(r.finished_s - r.request.arrival_s);
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
      {"tokens_per_second", s.tokens_per_second},
      {"time_to_first_token_seconds_p50", s.time_to_first_token_seconds_p50},
      {"time_to_first_token_seconds_p99", s.time_to_first_token_seconds_p99},
      {"e2e_request_latency_seconds_p50", s.e2e_request_latency_seconds_p50},
      {"e2e_request_latency_seconds_p99", s.e2e_request_latency_seconds_p99},
  };
}

nlohmann::json requests_json(std::span<const ServeRequestResult> results) {
  nlohmann::json out = nlohmann::json::array();
  for (const ServeRequestResult& r : results) {
    const Request& q = r.request;
    nlohmann::json j = {{"id", q.id},
                        {"arrival_s", q.arrival_s},
                        {"prompt_tokens", q.prompt_tokens},
                        {"output_tokens", q.output_tokens()},
                        {"num_preemptions", q.num_preemptions}};
    if (q.state == RequestState::Refused) {
      j["finish"] = "refused";
      j["refusal"] = q.refusal;
    } else {
      j["finish"] = stop_reason_name(q.stop);
      j["time_to_first_token_seconds"] = r.first_token_s - q.arrival_s;
      j["e2e_request_latency_seconds"] = r.finished_s - q.arrival_s;
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace inferscope
