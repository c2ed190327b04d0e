#include "gui/dashboard/metrics_series.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace inferscope::gui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// True when `step` started more than `gap` seconds after `prev` ended: the engine sat idle in between.
bool idle_between(const StepMetrics& prev, const StepMetrics& step, double gap) {
  return step.time_s - step.duration_s - prev.time_s > gap;
}

// Keeps the last `max` points of a series.
void keep_last(Series& s, int max) {
  if (s.x.size() <= max) return;
  const int drop = static_cast<int>(s.x.size()) - max;
  s.x.remove(0, drop);
  s.y.remove(0, drop);
}

// One point per step (only those that scored drafts when `drafting_only`), at its end time; with
// `breaks`, a NaN point before the first point after an idle gap.
Series steps_where(const EngineMetricsSnapshot& s, const std::function<double(const StepMetrics&)>& value,
                   bool drafting_only, bool breaks) {
  Series out;
  const double gap = idle_gap_seconds(s);
  bool idle = false;  // an idle gap since the last point
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const StepMetrics& step = s.steps[i];
    idle = idle || (i > 0 && idle_between(s.steps[i - 1], step, gap));
    if (drafting_only && step.spec_draft_tokens == 0) continue;
    if (breaks && idle && !out.x.isEmpty()) {
      out.x.push_back(out.x.back());  // QCustomPlot ends the line at a NaN value
      out.y.push_back(kNaN);
    }
    idle = false;
    out.x.push_back(step.time_s);
    out.y.push_back(value(step));
  }
  return out;
}

}  // namespace

double median_step_seconds(const EngineMetricsSnapshot& s) {
  if (s.steps.empty()) return 0.01;
  std::vector<double> d;
  for (const StepMetrics& step : s.steps) d.push_back(step.duration_s);
  std::nth_element(d.begin(), d.begin() + static_cast<ptrdiff_t>(d.size() / 2), d.end());
  return std::max(d[d.size() / 2], 1e-4);
}

double idle_gap_seconds(const EngineMetricsSnapshot& s) {
  return std::max(kIdleGapSeconds, kIdleGapMedianSteps * median_step_seconds(s));
}

namespace {

// One point per request that has `value` (NaN when it has none yet) at arrival + `since_arrival`,
// sorted by time.
Series request_points(const EngineMetricsSnapshot& s, const std::function<double(const RequestMetrics&)>& since_arrival,
                      const std::function<double(const RequestMetrics&)>& value) {
  std::vector<std::pair<double, const RequestMetrics*>> points;
  for (const RequestMetrics& r : s.requests)
    if (!std::isnan(value(r))) points.emplace_back(r.arrival_s + since_arrival(r), &r);
  std::stable_sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Series out;
  for (const auto& [t, r] : points) {
    out.x.push_back(t);
    out.y.push_back(value(*r));
    out.ids.push_back(r->id);
  }
  return out;
}

double known(double seconds) { return seconds >= 0 ? seconds : kNaN; }

}  // namespace

Series ttft_series(const EngineMetricsSnapshot& s) {
  return request_points(s, [](const RequestMetrics& r) { return r.time_to_first_token_seconds; },
                        [](const RequestMetrics& r) { return known(r.time_to_first_token_seconds); });
}

Series e2e_series(const EngineMetricsSnapshot& s) {
  return request_points(s, [](const RequestMetrics& r) { return r.e2e_request_latency_seconds; },
                        [](const RequestMetrics& r) { return known(r.e2e_request_latency_seconds); });
}

Series queue_time_series(const EngineMetricsSnapshot& s) {
  return request_points(s, [](const RequestMetrics& r) { return r.request_queue_time_seconds; },
                        [](const RequestMetrics& r) { return known(r.request_queue_time_seconds); });
}

Series median_itl_series(const EngineMetricsSnapshot& s) {
  return request_points(s, [](const RequestMetrics& r) { return r.e2e_request_latency_seconds; },
                        [](const RequestMetrics& r) {
                          if (r.e2e_request_latency_seconds < 0 || r.inter_token_latency_seconds.empty()) return kNaN;
                          std::vector<double> gaps = r.inter_token_latency_seconds;
                          std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
                          return gaps[gaps.size() / 2];
                        });
}

namespace {

// Decode tokens per second of step time over up to kRateWindowSteps steps ending at step i, none
// before stretch_begin (the first step of i's busy stretch).
double window_decode_rate(const std::vector<StepMetrics>& steps, size_t stretch_begin, size_t i) {
  const size_t first = std::max(stretch_begin, i + 1 >= kRateWindowSteps ? i + 1 - kRateWindowSteps : 0);
  double tokens = 0, seconds = 0;
  for (size_t j = first; j <= i; ++j) {
    tokens += steps[j].decode_tokens;
    seconds += steps[j].duration_s;
  }
  return seconds > 0 ? tokens / seconds : 0;
}

}  // namespace

Series decode_rate_series(const EngineMetricsSnapshot& s) {
  Series out;
  const double gap = idle_gap_seconds(s);
  size_t stretch_begin = 0;  // first step of the current busy stretch
  for (size_t i = 0; i < s.steps.size(); ++i) {
    if (i > 0 && idle_between(s.steps[i - 1], s.steps[i], gap)) {
      out.x.push_back(s.steps[i - 1].time_s);  // a NaN point ends the line at the idle gap
      out.y.push_back(kNaN);
      stretch_begin = i;
    }
    out.x.push_back(s.steps[i].time_s);
    out.y.push_back(window_decode_rate(s.steps, stretch_begin, i));
  }
  return out;
}

std::optional<double> decode_rate_now(const EngineMetricsSnapshot& s) {
  if (s.num_requests_running == 0 || s.steps.empty()) return std::nullopt;
  return decode_rate_series(s).y.back();  // a NaN only ever precedes a stretch's first point
}

Series reported_step_series(const EngineMetricsSnapshot& s, const std::function<double(const StepMetrics&)>& value) {
  Series out;
  for (const StepMetrics& step : s.steps) {
    const double v = value(step);
    if (v < 0) continue;
    out.x.push_back(step.time_s);
    out.y.push_back(v);
  }
  return out;
}

Series step_series(const EngineMetricsSnapshot& s, const std::function<double(const StepMetrics&)>& value) {
  return steps_where(s, value, false, true);
}

Series step_bars(const EngineMetricsSnapshot& s, const std::function<double(const StepMetrics&)>& value) {
  return steps_where(s, value, false, false);
}

Series drafting_step_series(const EngineMetricsSnapshot& s, const std::function<double(const StepMetrics&)>& value) {
  return steps_where(s, value, true, true);
}

Series acceptance_window_series(const EngineMetricsSnapshot& s) {
  Series out;
  std::vector<const StepMetrics*> drafting;
  for (const StepMetrics& step : s.steps)
    if (step.spec_draft_tokens > 0) drafting.push_back(&step);
  for (size_t i = 0; i < drafting.size(); ++i) {
    double drafted = 0, accepted = 0;
    for (size_t j = i + 1 >= kAcceptanceWindowSteps ? i + 1 - kAcceptanceWindowSteps : 0; j <= i; ++j) {
      drafted += drafting[j]->spec_draft_tokens;
      accepted += drafting[j]->spec_accepted_tokens;
    }
    out.x.push_back(drafting[i]->time_s);
    out.y.push_back(accepted / drafted);
  }
  return out;
}

Series acceptance_per_position(const SpecDecodeCounters& spec) {
  Series out;
  if (spec.num_drafts == 0) return out;
  for (size_t i = 0; i < spec.num_accepted_tokens_per_pos.size(); ++i) {
    out.x.push_back(static_cast<double>(i + 1));
    out.y.push_back(static_cast<double>(spec.num_accepted_tokens_per_pos[i]) / static_cast<double>(spec.num_drafts));
  }
  return out;
}

std::pair<double, double> time_span(const EngineMetricsSnapshot& s) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  if (!s.steps.empty()) {
    lo = s.steps.front().time_s - s.steps.front().duration_s;
    hi = s.steps.back().time_s;
  }
  for (const RequestMetrics& r : s.requests) {
    if (r.time_to_first_token_seconds < 0) continue;
    lo = std::min(lo, r.arrival_s + r.time_to_first_token_seconds);
    hi = std::max(hi, r.arrival_s + r.time_to_first_token_seconds);
  }
  if (lo > hi) return {0, 0};
  return {std::max(0.0, lo), hi};
}

void PrefixHitHistory::add(double t, int64_t queries, int64_t hits) {
  if (queries < queries_ || hits < hits_) {
    // The counters restarted (a new cache): the lines break rather than join two caches' rates across a
    // time that may have had no prefix cache at all.
    queries_ = hits_ = 0;
    if (!cumulative_.x.isEmpty()) {
      for (Series* s : {&cumulative_, &interval_}) {
        s->x.push_back(t);
        s->y.push_back(kNaN);
      }
    }
  }
  if (queries == queries_) return;
  cumulative_.x.push_back(t);
  cumulative_.y.push_back(static_cast<double>(hits) / static_cast<double>(queries));
  interval_.x.push_back(t);
  interval_.y.push_back(static_cast<double>(hits - hits_) / static_cast<double>(queries - queries_));
  queries_ = queries;
  hits_ = hits;
  keep_last(cumulative_, kMaxPoints);
  keep_last(interval_, kMaxPoints);
}

bool PreemptionHistory::add(double t, int64_t num_preemptions) {
  const int64_t before = seen_;
  seen_ = num_preemptions;
  if (num_preemptions <= before) return false;
  times_.push_back(t);
  counts_.push_back(num_preemptions - before);
  if (times_.size() > kMaxMarks) {
    times_.removeFirst();
    counts_.removeFirst();
  }
  return true;
}

}  // namespace inferscope::gui
