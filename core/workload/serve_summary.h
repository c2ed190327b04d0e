// The figures a serving run reports, computed from the engine's metrics timeline, in vLLM's names
// and units (seconds; every *_perc and rate a fraction 0..1). KV figures are averaged over steps
// weighted by step duration; every step has at least one request holding memory, so idle gaps
// between arrivals do not dilute them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/common/metric_unit.h"
#include "core/engine/engine_metrics.h"

namespace inferscope {

struct ServeSummary {
  int32_t requests_total = 0;
  int32_t requests_finished = 0;  // ended with "stop" or "length"
  int32_t requests_refused = 0;   // ended with "error" (could never fit, bad prompt, failed step)
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
  double flops = 0, bytes_read = 0;  // the steps' work (core/engine/step_cost.h): FLOPs, weight + KV bytes
  double flops_per_second = 0;       // flops / time spent in steps (what the machine achieved)
  double weight_bytes = 0;           // bytes of the matrices a decode step reads (0 where unknown: a server)
  double attention_scratch_bytes_peak = 0;  // the attention implementation's scratch at its peak
  double tokens_per_second = 0;      // output tokens / duration
  double time_to_first_token_seconds_p50 = 0, time_to_first_token_seconds_p99 = 0;
  double e2e_request_latency_seconds_p50 = 0, e2e_request_latency_seconds_p99 = 0;
  std::string spec_mode = "none";
  SpecDecodeCounters spec;           // every speculative step of the run
};

// Which way a figure is better on its own: Neither where a change can be good or bad depending on what
// else changed (a contiguous cache reports 0 % fragmentation while wasting its reservation).
enum class Better { Higher, Lower, Neither };

// Every figure of a serving run, declared once: its summary_json key and value, its unit, and its row
// in Compare's delta table. summary_json and Compare walk this table: a new figure is its ServeSummary
// field, its line in summarize() and one row.
struct ServeFigure {
  std::string key{};  // its summary_json key
  double (*value)(const ServeSummary&) = nullptr;
  MetricUnit unit{};
  std::string label{};  // its row in Compare's delta table ("" where Compare shows none)
  Better better = Better::Neither;
  std::string neutral_reason{};  // Neither: why a change is not called better or worse
  // The step metric or panel a side must report for the figure to be measured there
  // (EngineMetricsSnapshot::not_reported); "" where every side measures it.
  std::string reported_as{};
  // Whether the figure applies to a run at all (it speculated); nullptr where it applies to every run.
  // Compare shows its row where it applies to either side.
  bool (*applies)(const ServeSummary&) = nullptr;
  // A zero means the run did not measure it (its weights, its attention scratch): Compare's row is
  // unavailable unless a side measured it, and a server's zero is its server not reporting it.
  bool zero_is_unmeasured = false;
};

// Every figure, in summary_json's order.
const std::vector<ServeFigure>& serve_figures();

// Whether the run `metrics` describes did not measure figure `f` (of `value`): it lists f.reported_as
// as not reported, or it ran on a server (metrics.source) and f's zero means unmeasured.
bool figure_unmeasured(const ServeFigure& f, const EngineMetricsSnapshot& metrics, double value);

// `metrics` must hold the run's whole timeline (every step and request: EngineCoreOptions windows
// of SIZE_MAX); `duration_s` is the run's length.
ServeSummary summarize(const EngineMetricsSnapshot& metrics, double duration_s);

// The q-quantile (0..1) of `values`, linearly interpolated between order statistics; 0 when empty.
double quantile(std::vector<double> values, double q);

nlohmann::json summary_json(const ServeSummary& s);

}  // namespace inferscope
