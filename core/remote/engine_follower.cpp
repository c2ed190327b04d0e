#include "core/remote/engine_follower.h"

#include <algorithm>

namespace inferscope {
namespace {

double ended_at(const RequestMetrics& r) { return r.arrival_s + r.e2e_request_latency_seconds; }

}  // namespace

std::optional<double> EngineFollower::after_s() const {
  if (!latest_) return std::nullopt;
  // Before any step, only requests can be news: every one that ended since the server started.
  return steps_.empty() ? -1.0 : steps_.back().time_s;
}

void EngineFollower::take(EngineMetricsSnapshot answer) {
  if (latest_ && answer.uptime_s < latest_->uptime_s) {
    steps_.clear();
    finished_.clear();
    live_.clear();
  }
  const double after = steps_.empty() ? -1.0 : steps_.back().time_s;
  for (StepMetrics& st : answer.steps) {
    if (st.time_s > after) steps_.push_back(std::move(st));
  }
  if (steps_.size() > step_window_) steps_.erase(steps_.begin(), steps_.end() - static_cast<std::ptrdiff_t>(step_window_));
  // Every request in flight is in each answer: one no longer there has ended out of the server's window.
  live_.clear();
  for (RequestMetrics& r : answer.requests) {
    if (r.finish_reason.empty()) {
      live_[r.id] = std::move(r);
    } else {
      finished_[r.id] = std::move(r);
    }
  }
  while (finished_.size() > finished_window_) {
    const auto oldest = std::min_element(finished_.begin(), finished_.end(),
                                         [](const auto& a, const auto& b) { return ended_at(a.second) < ended_at(b.second); });
    finished_.erase(oldest);
  }
  answer.steps.clear();
  answer.requests.clear();
  latest_ = std::move(answer);
}

EngineMetricsSnapshot EngineFollower::snapshot() const {
  EngineMetricsSnapshot s = latest_.value_or(EngineMetricsSnapshot{});
  s.steps = steps_;
  for (const auto& [id, r] : finished_) s.requests.push_back(r);
  std::stable_sort(s.requests.begin(), s.requests.end(), [](const RequestMetrics& a, const RequestMetrics& b) { return ended_at(a) < ended_at(b); });
  for (const auto& [id, r] : live_) s.requests.push_back(r);
  return s;
}

}  // namespace inferscope
