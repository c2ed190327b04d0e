// The figures serve-sim reports, in vLLM's names and units (seconds; every *_perc and rate a
// fraction 0..1). KV figures are averaged over steps weighted by step duration; every step has at
// least one request holding memory, so idle gaps between arrivals do not dilute them.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/kv/kv_cache.h"
#include "core/sched/request.h"
#include "core/sched/scheduler.h"

namespace inferscope {

// One request at the end of a run, with its times (seconds from the start; -1 when never reached).
struct ServeRequestResult {
  Request request;
  double first_token_s = -1;
  double finished_s = -1;
};

struct ServeSummary {
  int32_t requests_total = 0, requests_finished = 0, requests_refused = 0;
  int64_t steps = 0;
  double duration_s = 0;
  double kv_cache_usage_perc_peak = 0, kv_cache_usage_perc_mean = 0;
  double kv_internal_fragmentation_perc_mean = 0, kv_reserved_unused_perc_mean = 0;
  int32_t max_concurrent_requests = 0;
  double num_requests_running_mean = 0;
  int64_t num_preemptions = 0;
  int64_t prefix_cache_queries = 0, prefix_cache_hits = 0;
  double prefix_cache_hit_rate = 0;  // hits / queries, in tokens, over admissions (not retried attempts)
  int64_t prefill_tokens = 0;        // prompt tokens computed (recomputation after preemption included)
  int64_t decode_tokens = 0;
  int64_t output_tokens = 0;         // tokens generated for finished requests
  double tokens_per_second = 0;      // output tokens / duration
  double time_to_first_token_seconds_p50 = 0, time_to_first_token_seconds_p99 = 0;
  double e2e_request_latency_seconds_p50 = 0, e2e_request_latency_seconds_p99 = 0;
};

// Accumulates per-step figures during a run.
class ServeMetrics {
 public:
  // `kv`: the cache's stats while the step ran (after its allocations).
  void record_step(const KvStats& kv, const StepPlan& plan, double duration_s);
  ServeSummary summary(std::span<const ServeRequestResult> results, int64_t num_preemptions, double duration_s) const;

 private:
  int64_t steps_ = 0;
  double weighted_s_ = 0;  // total duration of recorded steps
  double usage_s_ = 0, fragmentation_s_ = 0, reserved_unused_s_ = 0, running_s_ = 0;  // value x seconds
  double usage_peak_ = 0;
  int32_t max_running_ = 0;
  int64_t prefill_tokens_ = 0, decode_tokens_ = 0;
  int64_t prefix_queries_ = 0, prefix_hits_ = 0;
};

// The q-quantile (0..1) of `values`, linearly interpolated between order statistics; 0 when empty.
double quantile(std::vector<double> values, double q);

nlohmann::json summary_json(const ServeSummary& s);
nlohmann::json requests_json(std::span<const ServeRequestResult> results);

}  // namespace inferscope
