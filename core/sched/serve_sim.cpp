#include "core/sched/serve_sim.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>

namespace inferscope {
namespace {

// Seconds since the start of the run: virtual (advanced by step costs, jumping over idle gaps) or
// read from the wall clock (sleeping through idle gaps).
class SimClock {
 public:
  explicit SimClock(bool virtual_time) : virtual_(virtual_time), start_(std::chrono::steady_clock::now()) {}
  double now() const {
    return virtual_ ? now_ : std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  void advance(double seconds) {
    if (virtual_) now_ += seconds;
  }
  void wait_until(double t) {
    if (virtual_) {
      now_ = std::max(now_, t);
    } else {
      std::this_thread::sleep_until(start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                 std::chrono::duration<double>(t)));
    }
  }

 private:
  bool virtual_;
  std::chrono::steady_clock::time_point start_;
  double now_ = 0;
};

}  // namespace

ServeSimResult run_serve_sim(std::vector<Request> requests, KvCache& kv, const RequestLimit& limit,
                             StepExecutor& executor, bool virtual_clock, const SchedulerConfig& config) {
  std::stable_sort(requests.begin(), requests.end(),
                   [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  std::vector<RequestId> ids;
  for (const Request& r : requests) ids.push_back(r.id);
  struct Times {
    double first_token_s = -1, finished_s = -1;
  };
  std::map<RequestId, Times> times;

  Scheduler scheduler(kv, limit, config);
  ServeMetrics metrics;
  SimClock clock(virtual_clock);
  std::vector<SampledToken> sampled;
  size_t next = 0;
  while (true) {
    while (next < requests.size() && requests[next].arrival_s <= clock.now()) scheduler.add(std::move(requests[next++]));
    if (scheduler.idle()) {
      if (next == requests.size()) break;
      clock.wait_until(requests[next].arrival_s);
      continue;
    }
    const StepPlan plan = scheduler.schedule();
    if (plan.empty()) {
      throw std::logic_error("serve-sim: the scheduler stalled with " + std::to_string(scheduler.waiting().size()) +
                             " waiting and " + std::to_string(scheduler.running().size()) + " running requests");
    }
    const KvStats during = kv.stats();  // what the step holds, before finished requests let go
    const double seconds = executor.execute(plan, sampled);
    clock.advance(seconds);
    metrics.record_step(during, plan, seconds);
    const StepOutcome outcome = scheduler.complete(plan, sampled);
    for (RequestId id : outcome.first_token) times[id].first_token_s = clock.now();
    for (RequestId id : outcome.finished) {
      times[id].finished_s = clock.now();
      executor.forget(id);
    }
  }

  ServeSimResult result;
  std::sort(ids.begin(), ids.end());
  for (RequestId id : ids) {
    const Times t = times[id];
    result.requests.push_back(ServeRequestResult{scheduler.request(id), t.first_token_s, t.finished_s});
  }
  result.summary = metrics.summary(result.requests, scheduler.num_preemptions(), clock.now());
  return result;
}

}  // namespace inferscope
