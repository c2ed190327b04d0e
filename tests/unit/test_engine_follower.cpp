// Another Inferscope's engine followed poll by poll (core/remote/engine_follower.h): deltas merge into
// the snapshot its engine would give, in windows as bounded as the local engine's.
#include <gtest/gtest.h>

#include "core/remote/engine_follower.h"

namespace inferscope {
namespace {

StepMetrics step_at(double t) {
  StepMetrics s;
  s.time_s = t;
  s.decode_tokens = 1;
  return s;
}

RequestMetrics request(RequestId id, double arrival, double e2e = -1, const char* reason = "") {
  RequestMetrics r;
  r.id = id;
  r.arrival_s = arrival;
  r.e2e_request_latency_seconds = e2e;
  r.finish_reason = reason;
  return r;
}

EngineMetricsSnapshot answer(double uptime, std::vector<StepMetrics> steps, std::vector<RequestMetrics> requests) {
  EngineMetricsSnapshot s;
  s.uptime_s = uptime;
  s.num_steps = static_cast<int64_t>(steps.size());
  s.steps = std::move(steps);
  s.requests = std::move(requests);
  return s;
}

std::vector<double> step_times(const EngineMetricsSnapshot& s) {
  std::vector<double> t;
  for (const StepMetrics& st : s.steps) t.push_back(st.time_s);
  return t;
}

std::vector<RequestId> request_ids(const EngineMetricsSnapshot& s) {
  std::vector<RequestId> ids;
  for (const RequestMetrics& r : s.requests) ids.push_back(r.id);
  return ids;
}

TEST(EngineFollower, MergesEachDeltaIntoOneSnapshot) {
  EngineFollower f;
  EXPECT_FALSE(f.after_s().has_value()) << "the first poll asks for everything";
  f.take(answer(2.0, {step_at(1.0), step_at(1.5)}, {request(0, 0.5, 0.9, "stop"), request(1, 1.2), request(2, 1.4)}));
  EXPECT_EQ(f.after_s(), 1.5);
  // The next answer: the steps after 1.5 (one of them again, as a step that ended while the snapshot
  // was taken can be), request 1 ended, 2 still running, 3 new.
  EngineMetricsSnapshot next = answer(3.0, {step_at(1.5), step_at(2.5)}, {request(1, 1.2, 1.3, "length"), request(2, 1.4), request(3, 2.6)});
  next.generation_tokens_total = 42;
  f.take(next);
  const EngineMetricsSnapshot s = f.snapshot();
  EXPECT_EQ(step_times(s), (std::vector<double>{1.0, 1.5, 2.5}));
  EXPECT_EQ(request_ids(s), (std::vector<RequestId>{0, 1, 2, 3})) << "finished in the order they ended, then in flight";
  EXPECT_EQ(s.requests[1].finish_reason, "length");
  EXPECT_EQ(s.uptime_s, 3.0);
  EXPECT_EQ(s.generation_tokens_total, 42) << "the newest numbers";
  EXPECT_EQ(f.after_s(), 2.5);
}

TEST(EngineFollower, FinishedRequestsAreOrderedByTheirEnd) {
  EngineFollower f;
  f.take(answer(5.0, {}, {request(4, 1.0, 3.0, "stop"), request(5, 2.0, 0.5, "abort")}));
  EXPECT_EQ(request_ids(f.snapshot()), (std::vector<RequestId>{5, 4}));
  EXPECT_EQ(f.after_s(), -1.0) << "no step yet: every ended request is still news";
}

TEST(EngineFollower, KeepsWindowsAsBoundedAsTheEngines) {
  EngineFollower f(3, 2);
  f.take(answer(1.0, {step_at(0.1), step_at(0.2)}, {request(0, 0.0, 0.1, "stop"), request(1, 0.0, 0.2, "stop")}));
  f.take(answer(2.0, {step_at(0.3), step_at(0.4)}, {request(2, 0.0, 0.3, "stop"), request(3, 0.5)}));
  const EngineMetricsSnapshot s = f.snapshot();
  EXPECT_EQ(step_times(s), (std::vector<double>{0.2, 0.3, 0.4}));
  EXPECT_EQ(request_ids(s), (std::vector<RequestId>{1, 2, 3})) << "the two that ended last, then the running one";
}

// A request in flight that is missing from an answer has left the server's window: not kept as running.
TEST(EngineFollower, ARunningRequestGoneFromTheAnswerIsDropped) {
  EngineFollower f;
  f.take(answer(1.0, {step_at(0.5)}, {request(7, 0.1)}));
  f.take(answer(2.0, {step_at(1.5)}, {}));
  EXPECT_TRUE(f.snapshot().requests.empty());
}

TEST(EngineFollower, AServerThatRestartedIsFollowedAfresh) {
  EngineFollower f;
  f.take(answer(100.0, {step_at(99.0)}, {request(9, 98.0, 1.0, "stop")}));
  f.take(answer(0.5, {step_at(0.2)}, {request(0, 0.1)}));
  const EngineMetricsSnapshot s = f.snapshot();
  EXPECT_EQ(step_times(s), std::vector<double>{0.2});
  EXPECT_EQ(request_ids(s), std::vector<RequestId>{0});
}

}  // namespace
}  // namespace inferscope
