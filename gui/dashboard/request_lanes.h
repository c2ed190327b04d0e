// The request timeline's data (plain, no widgets): one lane per request, built from a metrics
// snapshot's steps (who ran in each, whom it preempted; a step starts at time_s - duration_s) and
// requests (arrival, queue time, TTFT, e2e latency). A lane's bars: waiting (arrival to its first
// step, and after each preemption until it runs again), prefill (prompt chunks, or the recompute
// after a preemption) and decode. Consecutive steps of one kind (consecutive in the step sequence)
// merge into one bar, so a long decode is one bar, not thousands.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/engine_metrics.h"

namespace inferscope::gui {

enum class LaneKind { Waiting, Prefill, Decode };
const char* lane_kind_name(LaneKind kind);  // "waiting", "prefill", "decode"

struct LaneSegment {
  LaneKind kind = LaneKind::Waiting;
  double start_s = 0, end_s = 0;  // seconds since the engine started
  int32_t tokens = 0;             // computed in the bar's steps (prompt tokens, or decode tokens with drafts)
  int32_t steps = 0;              // engine steps merged into the bar (0 for waiting)
};

struct RequestLane {
  RequestId id = 0;
  double arrival_s = 0;
  int32_t prompt_tokens = 0, generation_tokens = 0;
  double first_token_s = -1;  // arrival + time_to_first_token_seconds (-1: none yet)
  double finish_s = -1;       // arrival + e2e_request_latency_seconds (-1: not finished)
  std::string finish_reason;
  std::string client;                 // who asked (RequestMetrics::client); "" for the front end's own
  std::vector<LaneSegment> segments;  // in time order
  std::vector<double> preemptions_s;  // the starts of the steps that preempted it
};

// One lane per request of `s`, in arrival order. Bars still open (a request waiting now) end at
// the snapshot's uptime; steps of requests the snapshot no longer holds are left out.
std::vector<RequestLane> request_lanes(const EngineMetricsSnapshot& s);

}  // namespace inferscope::gui
