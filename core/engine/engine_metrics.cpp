#include "core/engine/engine_metrics.h"

#include <algorithm>

#include "core/common/field_as_double.h"
#include "core/engine/step_metrics.h"

namespace inferscope {

void SpecDecodeCounters::add(int32_t drafted, int32_t accepted) {
  if (drafted <= 0) return;
  ++num_drafts;
  num_draft_tokens += drafted;
  num_accepted_tokens += accepted;
  if (num_accepted_tokens_per_pos.size() < static_cast<size_t>(drafted)) num_accepted_tokens_per_pos.resize(drafted, 0);
  for (int32_t i = 0; i < accepted; ++i) ++num_accepted_tokens_per_pos[i];
}

double SpecDecodeCounters::acceptance_rate() const {
  return num_draft_tokens > 0 ? static_cast<double>(num_accepted_tokens) / static_cast<double>(num_draft_tokens) : 0.0;
}

double SpecDecodeCounters::mean_acceptance_length() const {
  return 1.0 + (num_drafts > 0 ? static_cast<double>(num_accepted_tokens) / static_cast<double>(num_drafts) : 0.0);
}

void EngineMetrics::on_spec(RequestId id, int32_t drafted, int32_t accepted) {
  std::lock_guard lock(mu_);
  totals_.spec.add(drafted, accepted);
  auto it = live_.find(id);
  if (it != live_.end()) it->second.spec.add(drafted, accepted);
}

void EngineMetrics::set_spec_mode(const std::string& mode) {
  std::lock_guard lock(mu_);
  totals_.spec_mode = mode;
}

void EngineMetrics::on_arrival(RequestId id, double t, int32_t prompt_tokens, const std::string& client) {
  std::lock_guard lock(mu_);
  RequestMetrics& m = live_[id];
  m.id = id;
  m.arrival_s = t;
  m.prompt_tokens = prompt_tokens;
  m.client = client;
  totals_.prompt_tokens_total += prompt_tokens;
}

void EngineMetrics::on_scheduled(RequestId id, double t) {
  std::lock_guard lock(mu_);
  auto it = live_.find(id);
  if (it != live_.end() && it->second.request_queue_time_seconds < 0) {
    it->second.request_queue_time_seconds = t - it->second.arrival_s;
  }
}

void EngineMetrics::on_token(RequestId id, double t) {
  std::lock_guard lock(mu_);
  auto it = live_.find(id);
  if (it == live_.end()) return;
  RequestMetrics& m = it->second;
  if (m.generation_tokens == 0) {
    m.time_to_first_token_seconds = t - m.arrival_s;
    totals_.histograms.time_to_first_token.observe(m.time_to_first_token_seconds);
  } else {
    totals_.histograms.inter_token_latency.observe(t - m.last_token_s);
    if (m.inter_token_latency_seconds.size() < kMaxItl) m.inter_token_latency_seconds.push_back(t - m.last_token_s);
  }
  m.last_token_s = t;
  ++m.generation_tokens;
  ++totals_.generation_tokens_total;
}

void EngineMetrics::on_finished(RequestId id, double t, const char* reason, int32_t num_preemptions) {
  std::lock_guard lock(mu_);
  auto it = live_.find(id);
  if (it == live_.end()) return;
  RequestMetrics m = std::move(it->second);
  live_.erase(it);
  m.e2e_request_latency_seconds = t - m.arrival_s;
  m.finish_reason = reason;
  m.num_preemptions = num_preemptions;
  // The phases of a request that ran (vLLM's: queued, prefill to the first token, decode to the last).
  ServingHistograms& h = totals_.histograms;
  if (m.finish_reason == "stop" || m.finish_reason == "length") h.e2e_request_latency.observe(m.e2e_request_latency_seconds);
  if (m.request_queue_time_seconds >= 0) h.request_queue_time.observe(m.request_queue_time_seconds);
  if (m.request_queue_time_seconds >= 0 && m.time_to_first_token_seconds >= 0) {
    h.request_prefill_time.observe(m.time_to_first_token_seconds - m.request_queue_time_seconds);
    h.request_decode_time.observe(m.last_token_s - (m.arrival_s + m.time_to_first_token_seconds));
  }
  ++totals_.finished_by_reason[m.finish_reason];
  finished_.push(std::move(m));
  ++totals_.requests_finished;
}

void EngineMetrics::on_usage(RequestId id, int32_t prompt_tokens, int32_t generation_tokens) {
  std::lock_guard lock(mu_);
  auto it = live_.find(id);
  if (it == live_.end()) return;
  RequestMetrics& m = it->second;
  totals_.prompt_tokens_total += prompt_tokens - m.prompt_tokens;
  totals_.generation_tokens_total += generation_tokens - m.generation_tokens;
  m.prompt_tokens = prompt_tokens;
  m.generation_tokens = generation_tokens;
}

void EngineMetrics::on_preempted(int64_t count) {
  std::lock_guard lock(mu_);
  totals_.num_preemptions += count;
}

void EngineMetrics::on_step(const StepMetrics& step) {
  std::lock_guard lock(mu_);
  steps_.push(step);
  ++totals_.num_steps;
  totals_.attention_seconds_total += step.attention_seconds;
  totals_.matmul_seconds_total += step.matmul_seconds;
  totals_.prefix_cache_queries += step.prefix_cache_queries;
  totals_.prefix_cache_hits += step.prefix_cache_hits;
}

void EngineMetrics::set_kv(const KvStats& kv) {
  std::lock_guard lock(mu_);
  totals_.kv = kv;
}

void EngineMetrics::set_queue(int32_t running, int32_t waiting) {
  std::lock_guard lock(mu_);
  totals_.num_requests_running = running;
  totals_.num_requests_waiting = waiting;
}

void EngineMetrics::set_weights(const std::string& quant, size_t bytes) {
  std::lock_guard lock(mu_);
  totals_.weights_quant = quant;
  totals_.weight_bytes = bytes;
}

void EngineMetrics::set_conversion(const std::string& level, double progress) {
  std::lock_guard lock(mu_);
  totals_.converting_to = level;
  totals_.conversion_progress = progress;
}

void EngineMetrics::set_device(const std::string& device, const std::string& fallback,
                               const std::optional<DeviceMemory>& memory) {
  std::lock_guard lock(mu_);
  totals_.device = device;
  totals_.device_fallback = fallback;
  totals_.device_memory = memory;
}

void EngineMetrics::set_device_memory(const std::optional<DeviceMemory>& memory) {
  std::lock_guard lock(mu_);
  totals_.device_memory = memory;
}

EngineMetricsSnapshot EngineMetrics::snapshot(double now) const {
  std::lock_guard lock(mu_);
  EngineMetricsSnapshot s = totals_;
  s.uptime_s = now;
  s.steps = steps_.to_vector();
  s.requests = finished_.to_vector();
  for (const auto& [id, m] : live_) s.requests.push_back(m);
  double seconds = 0, prefill = 0, decode = 0;
  for (const StepMetrics& st : s.steps) {
    seconds += st.duration_s;
    prefill += st.prefill_tokens;
    decode += st.decode_tokens;
  }
  if (seconds > 0) {
    s.prefill_tokens_per_second = prefill / seconds;
    s.decode_tokens_per_second = decode / seconds;
  }
  return s;
}

const std::vector<SnapshotMetric>& snapshot_metrics_table() {
  using S = EngineMetricsSnapshot;
  using U = MetricUnit;
  static const std::vector<SnapshotMetric> table = {
      {"uptime_s", field_value<&S::uptime_s>, set_field<&S::uptime_s>, U::Seconds, "time since the engine started"},
      {"num_requests_running", field_value<&S::num_requests_running>, set_field<&S::num_requests_running>, U::Count,
       "requests being computed"},
      {"num_requests_waiting", field_value<&S::num_requests_waiting>, set_field<&S::num_requests_waiting>, U::Count,
       "requests waiting to be scheduled"},
      {"num_preemptions", field_value<&S::num_preemptions>, set_field<&S::num_preemptions>, U::Count,
       "requests sent back to wait for memory, in all"},
      {"num_steps", field_value<&S::num_steps>, set_field<&S::num_steps>, U::Count, "engine steps run"},
      {"requests_finished", field_value<&S::requests_finished>, set_field<&S::requests_finished>, U::Count, "requests ended"},
      {"prompt_tokens_total", field_value<&S::prompt_tokens_total>, set_field<&S::prompt_tokens_total>, U::Tokens,
       "prompt tokens of every request admitted"},
      {"generation_tokens_total", field_value<&S::generation_tokens_total>, set_field<&S::generation_tokens_total>, U::Tokens,
       "tokens generated, in all"},
      {"prefill_tokens_per_second", field_value<&S::prefill_tokens_per_second>, set_field<&S::prefill_tokens_per_second>, U::TokensPerSecond,
       "prompt tokens computed per second of step time, over the recent steps"},
      {"decode_tokens_per_second", field_value<&S::decode_tokens_per_second>, set_field<&S::decode_tokens_per_second>, U::TokensPerSecond,
       "tokens decoded per second of step time, over the recent steps"},
      {"kv_cache_usage_perc", [](const S& s) { return s.kv.kv_cache_usage_perc(); }, nullptr, U::Fraction,
       "the KV cache's share in use, as of the last step"},
      {"kv_internal_fragmentation_perc", [](const S& s) { return s.kv.kv_internal_fragmentation_perc(); }, nullptr, U::Fraction,
       "of the KV in use, the share of allocated slots holding no token"},
      {"kv_reserved_unused_perc", [](const S& s) { return s.kv.kv_reserved_unused_perc(); }, nullptr, U::Fraction,
       "of the KV in use, the share reserved ahead and never written"},
      {"weight_bytes", field_value<&S::weight_bytes>, set_field<&S::weight_bytes>, U::Bytes,
       "bytes of the weight matrices a decode step reads"},
      {"conversion_progress", field_value<&S::conversion_progress>, set_field<&S::conversion_progress>, U::Fraction,
       "how far a background conversion to another weight level has come"},
      {"prefix_cache_queries", field_value<&S::prefix_cache_queries>, set_field<&S::prefix_cache_queries>, U::Tokens,
       "prompt tokens looked up in the prefix cache, in all"},
      {"prefix_cache_hits", field_value<&S::prefix_cache_hits>, set_field<&S::prefix_cache_hits>, U::Tokens,
       "of those, tokens found cached"},
  };
  return table;
}

std::string device_line(const EngineMetricsSnapshot& s) {
  return s.device_fallback.empty() ? s.device : s.device + " (" + s.device_fallback + ")";
}

std::optional<double> reported_kv_usage(const EngineMetricsSnapshot& s) {
  if (s.source.empty()) return s.kv.kv_cache_usage_perc();
  const bool reported = std::find(s.not_reported.begin(), s.not_reported.end(), "kv_cache_usage_perc") == s.not_reported.end();
  if (!reported || s.steps.empty()) return std::nullopt;
  return s.steps.back().kv_cache_usage_perc;
}

}  // namespace inferscope
