// Turns an engine metrics snapshot into the dashboard's series (plain data, no widgets): x is always
// seconds since the engine started, y is in the engine's units (seconds, fractions, bytes, tokens).
#pragma once
#include <QVector>
#include <cstdint>
#include <functional>
#include <optional>

#include "core/engine/engine_metrics.h"

namespace inferscope::gui {

struct Series {
  QVector<double> x, y;
  QVector<int32_t> ids;  // the request behind each point (request series only)
};

// Steps further apart (end of one to start of the next) than both of these leave a gap in every
// line: the engine was idle, and a line across the gap would claim values nobody measured.
inline constexpr double kIdleGapSeconds = 0.25;
inline constexpr double kIdleGapMedianSteps = 5;  // times the median step duration
// The median step duration of the snapshot's steps (a small positive floor; 0.01 s with no steps).
double median_step_seconds(const EngineMetricsSnapshot& s);
// The idle gap of this snapshot: max(kIdleGapSeconds, kIdleGapMedianSteps x median step duration).
double idle_gap_seconds(const EngineMetricsSnapshot& s);
// Steps averaged into one point of the decode-rate line.
inline constexpr int kRateWindowSteps = 4;

// TTFT of every request that has produced a token, at the time of that token, sorted by time.
Series ttft_series(const EngineMetricsSnapshot& s);
// End-to-end latency of every finished request, at its finish, sorted by time.
Series e2e_series(const EngineMetricsSnapshot& s);
// Queue time of every request that has been scheduled, at its first step, sorted by time.
Series queue_time_series(const EngineMetricsSnapshot& s);
// The median of each finished request's inter-token latencies, at its finish, sorted by time.
Series median_itl_series(const EngineMetricsSnapshot& s);
// A value some steps carry only (a remote server's latency percentiles and gauges, the draft length
// of steps with a speculating decode; negative where a step has none), at the steps that carry one.
Series reported_step_series(const EngineMetricsSnapshot& s, const std::function<double(const StepMetrics&)>& value);
// Decode tokens per second over the last kRateWindowSteps steps of each busy stretch, one point per
// step; NaN between stretches separated by idle time (QCustomPlot draws NaN as a gap).
Series decode_rate_series(const EngineMetricsSnapshot& s);
// The engine's decode throughput now, as the status bar shows it: the last point of
// decode_rate_series while a request runs; nullopt when none runs (the engine is idle).
std::optional<double> decode_rate_now(const EngineMetricsSnapshot& s);
// One point per step at its end time; a NaN point (at the last point's time) where the engine sat
// idle since the previous point, so lines break there.
Series step_series(const EngineMetricsSnapshot& s, const std::function<double(const StepMetrics&)>& value);
// One point per step at its end time with no breaks: for bars, which draw no line across gaps.
Series step_bars(const EngineMetricsSnapshot& s, const std::function<double(const StepMetrics&)>& value);
// step_series over the steps that scored draft tokens only (speculative decoding).
Series drafting_step_series(const EngineMetricsSnapshot& s, const std::function<double(const StepMetrics&)>& value);

// Drafting steps pooled into one point of the acceptance line.
inline constexpr int kAcceptanceWindowSteps = 8;
// Accepted / drafted tokens over the last kAcceptanceWindowSteps drafting steps, one point per drafting step.
Series acceptance_window_series(const EngineMetricsSnapshot& s);
// x = 1..n: the share of drafts whose token at that position was accepted (vLLM's per-position
// acceptance: num_accepted_tokens_per_pos / num_drafts); empty before the first draft.
Series acceptance_per_position(const SpecDecodeCounters& spec);
// The time range the series above cover (start of the oldest step or first token .. newest), or
// {0, 0} when there is nothing.
std::pair<double, double> time_span(const EngineMetricsSnapshot& s);

// The prefix-cache hit rate seen across updates (the snapshot holds only running totals): each call
// with changed totals adds a point of the cumulative rate and one of the rate since the last change;
// totals that fall (a new cache) break both lines with a NaN point.
class PrefixHitHistory {
 public:
  static constexpr int kMaxPoints = 4096;
  void add(double t, int64_t queries, int64_t hits);
  void clear() { *this = PrefixHitHistory(); }
  const Series& cumulative() const { return cumulative_; }
  const Series& interval() const { return interval_; }

 private:
  int64_t queries_ = 0, hits_ = 0;
  Series cumulative_, interval_;
};

// Times at which num_preemptions rose between updates, with how many happened.
class PreemptionHistory {
 public:
  static constexpr int kMaxMarks = 256;
  // True when a new mark was added.
  bool add(double t, int64_t num_preemptions);
  void clear() { *this = PreemptionHistory(); }
  const QVector<double>& times() const { return times_; }
  const QVector<int64_t>& counts() const { return counts_; }

 private:
  int64_t seen_ = 0;
  QVector<double> times_;
  QVector<int64_t> counts_;
};

}  // namespace inferscope::gui
