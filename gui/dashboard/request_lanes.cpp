#include "gui/dashboard/request_lanes.h"

#include <algorithm>
#include <map>

namespace inferscope::gui {

namespace {

// A lane while it is built: the step it last ran in, and since when it waits (-1: it does not).
struct Building {
  RequestLane lane;
  size_t last_step = SIZE_MAX;
  double waiting_since = -1;
};

void add_waiting(RequestLane& lane, double from, double to) {
  if (to > from) lane.segments.push_back({LaneKind::Waiting, from, to, 0, 0});
}

}  // namespace

const char* lane_kind_name(LaneKind kind) {
  switch (kind) {
    case LaneKind::Waiting:
      return "waiting";
    case LaneKind::Prefill:
      return "prefill";
    case LaneKind::Decode:
      return "decode";
  }
  return "";
}

std::vector<RequestLane> request_lanes(const EngineMetricsSnapshot& s) {
  const double now = std::max(s.uptime_s, s.steps.empty() ? 0.0 : s.steps.back().time_s);
  std::map<RequestId, Building> building;
  for (const RequestMetrics& r : s.requests) {
    Building& b = building[r.id];
    b.lane.id = r.id;
    b.lane.arrival_s = r.arrival_s;
    b.lane.prompt_tokens = r.prompt_tokens;
    b.lane.generation_tokens = r.generation_tokens;
    if (r.time_to_first_token_seconds >= 0) b.lane.first_token_s = r.arrival_s + r.time_to_first_token_seconds;
    if (r.e2e_request_latency_seconds >= 0) b.lane.finish_s = r.arrival_s + r.e2e_request_latency_seconds;
    b.lane.finish_reason = r.finish_reason;
    b.lane.client = r.client;
    // Queued from arrival until first scheduled (still queued: until now, or its end if it never ran).
    const double scheduled = r.request_queue_time_seconds >= 0 ? r.arrival_s + r.request_queue_time_seconds
                             : b.lane.finish_s >= 0               ? b.lane.finish_s
                                                                  : now;
    add_waiting(b.lane, r.arrival_s, scheduled);
  }
  for (size_t k = 0; k < s.steps.size(); ++k) {
    const StepMetrics& step = s.steps[k];
    const double start = step.time_s - step.duration_s;
    for (RequestId id : step.preempted) {
      auto it = building.find(id);
      if (it == building.end()) continue;
      it->second.lane.preemptions_s.push_back(start);
      it->second.waiting_since = start;
    }
    for (const StepSequence& seq : step.sequences) {
      auto it = building.find(seq.id);
      if (it == building.end()) continue;
      Building& b = it->second;
      if (b.waiting_since >= 0) add_waiting(b.lane, b.waiting_since, start);
      b.waiting_since = -1;
      const LaneKind kind = seq.prefill_tokens > 0 ? LaneKind::Prefill : LaneKind::Decode;
      const int32_t tokens = seq.prefill_tokens + seq.decode_tokens;
      std::vector<LaneSegment>& bars = b.lane.segments;
      // The same kind as in the step just before: the bar goes on.
      if (!bars.empty() && bars.back().kind == kind && b.last_step + 1 == k) {
        bars.back().end_s = step.time_s;
        bars.back().tokens += tokens;
        ++bars.back().steps;
      } else {
        bars.push_back({kind, start, step.time_s, tokens, 1});
      }
      b.last_step = k;
    }
  }
  std::vector<RequestLane> lanes;
  for (auto& [id, b] : building) {
    if (b.waiting_since >= 0) add_waiting(b.lane, b.waiting_since, b.lane.finish_s >= 0 ? b.lane.finish_s : now);
    lanes.push_back(std::move(b.lane));
  }
  std::stable_sort(lanes.begin(), lanes.end(), [](const RequestLane& a, const RequestLane& b) { return a.arrival_s < b.arrival_s; });
  return lanes;
}

}  // namespace inferscope::gui
