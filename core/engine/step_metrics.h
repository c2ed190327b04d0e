// Every per-step metric, declared once, beside the step it measures: the StepMetrics field, and its row
// in the table below with its --metrics-json key, its unit, what it measures, and where the dashboard
// draws it (panel, axis, line name, colour, whether a comparison overlays run B's line). metrics_json
// and the dashboard walk the table: a new step metric is its field and row here plus the code that
// measures it.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/metric_unit.h"
#include "core/common/request_id.h"

namespace inferscope {

// One request's part in a step (the request timeline): prompt tokens computed (a prefill chunk, or a
// recompute after preemption) and decode tokens (its token and the drafts it scored).
struct StepSequence {
  RequestId id = 0;
  int32_t prefill_tokens = 0, decode_tokens = 0;
  int32_t cached_tokens = 0;  // admitted in this step: its first tokens found in the prefix cache, not computed
};

// The latencies a remote server keeps histograms of (vLLM, SGLang), in vLLM's names: TTFT,
// inter-token latency, end-to-end request latency and queue time.
enum class ServerLatency { Ttft, InterToken, EndToEnd, Queue };
inline constexpr size_t kServerLatencies = 4;

// The median and 99th percentile of one such histogram over a window; -1 when it counted nothing.
struct LatencyPercentiles {
  double p50_s = -1, p99_s = -1;
};

struct StepMetrics {
  double time_s = 0;        // when the step ended, seconds since the engine started
  double duration_s = 0;
  int32_t num_requests_running = 0, num_requests_waiting = 0;
  int32_t prefill_tokens = 0, decode_tokens = 0;  // tokens computed in the step
  double kv_cache_usage_perc = 0, kv_internal_fragmentation_perc = 0, kv_reserved_unused_perc = 0;
  size_t attention_scratch_bytes = 0;  // the attention implementation's scratch at its peak
  double attention_seconds = 0;        // time spent in attention, all layers
  double matmul_seconds = 0;           // time spent in matmuls, all layers and the output head
  int32_t prefix_cache_queries = 0;    // prompt tokens of the step's admissions looked up in the prefix cache
  int32_t prefix_cache_hits = 0;       // of those, tokens found cached (not computed)
  int32_t spec_draft_tokens = 0;       // draft tokens scored in the step
  int32_t spec_accepted_tokens = 0;    // of those, accepted
  double spec_chosen_k = -1;           // the most drafts its speculating decodes could score, mean (-1: none)
  double draft_seconds = 0;            // proposing the drafts
  double verify_seconds = 0;           // the forward pass that scored them (0 when nothing drafted)
  int64_t pool_dispatches = 0;         // thread-pool dispatches (wake-up + join) the step's forward pass made
  double flops = 0;                    // matmul + attention FLOPs (core/engine/step_cost.h)
  double weight_bytes_read = 0;        // weight matrices read once, at the step's level
  double kv_bytes_read = 0;            // K/V of each sequence's context, every layer
  std::vector<StepSequence> sequences; // who ran in the step, in plan order
  std::vector<RequestId> preempted;    // sent back to wait by the step (recomputed later)
  // A remote server's step (a scrape interval): the percentiles of its latency histograms over the
  // last window, every client's requests, indexed by ServerLatency.
  std::array<LatencyPercentiles, kServerLatencies> server_latency{};
  // Rates a remote server publishes as gauges (SGLang): prefix-cache hit rate and speculative
  // acceptance rate, 0..1, and the mean accepted length (tokens per verify step); -1 when it does not.
  double server_prefix_hit_rate = -1, server_spec_accept_rate = -1, server_spec_accept_length = -1;
};

// How the dashboard draws a row, or that its own view does (the request timeline, the roofline, the
// speculation panels, the stacked token bars): None.
enum class MetricLook { None, Line, Area };

struct StepMetric {
  std::string key{};  // the StepMetrics field and its --metrics-json key
  double (*value)(const StepMetrics&) = nullptr;
  bool (*set)(StepMetrics&, double) = nullptr;  // the inverse, for JSON read back; false when the value does not fit
  MetricUnit unit{};
  std::string help{};  // what it measures
  // The dashboard: the panel (its plot's objectName), the right value axis or the left, the line's name
  // and colour (0xRRGGBB), and whether Compare draws run B's line over it.
  std::string panel{};
  bool right_axis = false;
  MetricLook look = MetricLook::None;
  std::string line{};
  uint32_t rgb = 0;
  bool overlay = false;
};

// Every step metric, in --metrics-json's order.
const std::vector<StepMetric>& step_metrics_table();
// The keys of the step metrics the dashboard draws as lines on `panel` (its plot's objectName).
std::vector<std::string> step_metrics_drawn_on(std::string_view panel);

}  // namespace inferscope
