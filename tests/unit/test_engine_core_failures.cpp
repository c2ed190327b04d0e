// EngineCore under failure, on a dry run of a small synthetic model: a config whose weight switch
// fails leaves the engine exactly as it was; a throwing callback, schedule() or complete() ends
// only the requests it affects, and the core goes on serving.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/engine/engine_core.h"
#include "core/model/llama_model.h"
#include "tests/support/synthetic_model.h"

namespace inferscope {
namespace {

const LlamaModel& model() {
  static const std::unique_ptr<LlamaModel> m = test::load_synthetic_model({});
  return *m;
}

// What the callbacks delivered, per request (the core calls them on the caller's thread).
struct Recorder {
  std::map<RequestId, int32_t> tokens;
  std::map<RequestId, StopReason> finished;
  std::map<RequestId, int32_t> finish_calls;
  std::map<RequestId, std::string> errors;
  std::vector<std::string> configs;

  EngineCallbacks callbacks() {
    EngineCallbacks c;
    c.on_token = [this](RequestId id, std::string_view, TokenId token, const TokenTiming&) {
      if (token >= 0) ++tokens[id];
    };
    c.on_finished = [this](RequestId id, StopReason reason) {
      finished[id] = reason;
      ++finish_calls[id];
    };
    c.on_error = [this](RequestId id, const std::string& message) { errors[id] = message; };
    c.on_config = [this](bool applied, const std::string& note) {
      configs.push_back((applied ? "applied: " : "rejected: ") + note);
    };
    return c;
  }
};

EngineCoreOptions dry_run(std::function<void(std::string_view)> fault = {}) {
  EngineCoreOptions o;
  o.dry_run = DryRunCost{0.01, 0.001};
  o.test_fault = std::move(fault);
  return o;
}

EngineConfig small_config() {
  EngineConfig c;
  c.threads = 1;
  return c;
}

EngineRequest request(int32_t max_tokens) {
  EngineRequest r;
  r.prompt_tokens = {1, 5, 6, 7, 8};
  r.max_tokens = max_tokens;
  return r;
}

void run_until_idle(EngineCore& core) {
  for (int i = 0; i < 1000 && core.has_work(); ++i) core.step();
  ASSERT_FALSE(core.has_work());
}

TEST(EngineCoreConfig, FailedWeightSwitchLeavesTheEngineAsItWas) {
  Recorder got;
  EngineCore core(model(), small_config(), got.callbacks(), dry_run([](std::string_view where) {
                    if (where == "convert weights") throw std::runtime_error("out of memory");
                  }));
  for (RequestId id = 0; id < 3; ++id) core.add(id, request(20));
  for (int i = 0; i < 3; ++i) core.step();
  const EngineConfig before = core.config();
  const KvSnapshot kv_before = core.kv_snapshot();
  const int64_t preemptions_before = core.metrics().snapshot(core.now()).num_preemptions;
  ASSERT_EQ(kv_before.sequences.size(), 3u);

  // A new cache and new weights at once: the cache comes first, then the conversion fails.
  EngineConfig next = before;
  next.kv.kind = KvKind::Contiguous;
  next.scheduler.max_running = 1;
  next.quant = WeightQuant::Q8;
  core.apply_config(next);

  ASSERT_EQ(got.configs.size(), 1u);
  EXPECT_EQ(got.configs[0], "rejected: config rejected: out of memory");
  EXPECT_EQ(core.config().kv.kind, KvKind::Paged);
  EXPECT_EQ(core.config().kv.budget_bytes, before.kv.budget_bytes);
  EXPECT_EQ(core.config().scheduler.max_running, 0);
  EXPECT_EQ(core.config().quant, WeightQuant::Native);
  const KvSnapshot kv_after = core.kv_snapshot();
  EXPECT_EQ(kv_after.kind, "paged");
  EXPECT_EQ(kv_after.block_size, kv_before.block_size);
  EXPECT_EQ(kv_after.blocks.size(), kv_before.blocks.size());
  ASSERT_EQ(kv_after.sequences.size(), kv_before.sequences.size());
  for (size_t i = 0; i < kv_before.sequences.size(); ++i) {
    EXPECT_EQ(kv_after.sequences[i].id, kv_before.sequences[i].id);
    EXPECT_EQ(kv_after.sequences[i].block_table, kv_before.sequences[i].block_table);
    EXPECT_EQ(kv_after.sequences[i].tokens, kv_before.sequences[i].tokens);
  }
  const EngineMetricsSnapshot m = core.metrics().snapshot(core.now());
  EXPECT_EQ(m.num_preemptions, preemptions_before);
  EXPECT_EQ(m.weights_quant, "native");

  // It keeps serving: the three run to their length on the old cache, and a new one after them.
  core.add(3, request(4));
  run_until_idle(core);
  for (RequestId id = 0; id < 4; ++id) {
    EXPECT_EQ(got.finished[id], StopReason::Length) << id;
    EXPECT_EQ(got.tokens[id], id < 3 ? 20 : 4) << id;
  }
  EXPECT_TRUE(got.errors.empty());
}

TEST(EngineCoreConfig, NewCacheAndNewWeightsAtOnceShareOneSwap) {
  Recorder got;
  EngineCore core(model(), small_config(), got.callbacks(), dry_run());
  for (RequestId id = 0; id < 3; ++id) core.add(id, request(20));
  for (int i = 0; i < 3; ++i) core.step();
  EngineConfig next = core.config();
  next.kv.kind = KvKind::Contiguous;
  next.quant = WeightQuant::Q8;
  core.apply_config(next);

  ASSERT_EQ(got.configs.size(), 1u);
  EXPECT_NE(got.configs[0].find("applied: KV contiguous"), std::string::npos) << got.configs[0];
  EXPECT_NE(got.configs[0].find("new KV cache; 3 running requests preempted"), std::string::npos) << got.configs[0];
  EXPECT_NE(got.configs[0].find("weights now q8"), std::string::npos) << got.configs[0];
  EXPECT_NE(got.configs[0].find("3 running requests recomputed with the new weights"), std::string::npos)
      << got.configs[0];
  EXPECT_EQ(core.config().kv.kind, KvKind::Contiguous);
  EXPECT_EQ(core.config().quant, WeightQuant::Q8);
  EXPECT_EQ(core.kv_snapshot().kind, "contiguous");
  const EngineMetricsSnapshot m = core.metrics().snapshot(core.now());
  EXPECT_EQ(m.num_preemptions, 3);
  EXPECT_EQ(m.weights_quant, "q8");
  run_until_idle(core);
  for (RequestId id = 0; id < 3; ++id) EXPECT_EQ(got.tokens[id], 20) << id;
}

// What a throwing callback throws: a runtime error, or exhaustion.
const std::vector<std::pair<std::string, std::function<void()>>> kThrowers = {
    {"display gone", [] { throw std::runtime_error("display gone"); }},
    {"std::bad_alloc", [] { throw std::bad_alloc(); }},
};

TEST(EngineCoreFailures, ThrowingTokenCallbackFailsOnlyItsRequest) {
  for (const auto& [what, thrower] : kThrowers) {
    Recorder got;
    EngineCallbacks cb = got.callbacks();
    cb.on_token = [&, on_token = cb.on_token](RequestId id, std::string_view piece, TokenId token,
                                              const TokenTiming& timing) {
      on_token(id, piece, token, timing);
      if (id == 0 && got.tokens[id] == 3) thrower();
    };
    EngineCore core(model(), small_config(), cb, dry_run());
    core.add(0, request(10));
    core.add(1, request(10));  // in the same batch as request 0
    EXPECT_NO_THROW(run_until_idle(core)) << what;
    EXPECT_EQ(got.finished[0], StopReason::Failed) << what;
    EXPECT_EQ(got.finish_calls[0], 1) << what;
    EXPECT_EQ(got.errors[0], "on_token callback failed: " + what);
    EXPECT_EQ(got.tokens[0], 3) << what;
    EXPECT_EQ(got.finished[1], StopReason::Length) << what;
    EXPECT_EQ(got.tokens[1], 10) << what;
    EXPECT_FALSE(got.errors.contains(1)) << what;
    EXPECT_TRUE(core.kv_snapshot().sequences.empty()) << what;

    core.add(2, request(5));
    run_until_idle(core);
    EXPECT_EQ(got.finished[2], StopReason::Length) << what;
    EXPECT_EQ(got.tokens[2], 5) << what;
  }
}

// The text held back for a possible stop string comes out when the request ends: a callback that
// throws on it fails the request instead of escaping.
TEST(EngineCoreFailures, ThrowingCallbackOnTheHeldBackTextFailsItsRequest) {
  std::string text;  // what request 0 shows without stop strings (the dry run's tokens are fixed)
  {
    EngineCallbacks cb;
    cb.on_token = [&](RequestId, std::string_view piece, TokenId, const TokenTiming&) { text += piece; };
    EngineCore core(model(), small_config(), cb, dry_run());
    core.add(0, request(6));
    run_until_idle(core);
  }
  ASSERT_FALSE(text.empty());
  Recorder got;
  EngineCallbacks cb = got.callbacks();
  cb.on_token = [&, on_token = cb.on_token](RequestId id, std::string_view piece, TokenId token,
                                            const TokenTiming& timing) {
    on_token(id, piece, token, timing);
    if (token < 0) throw std::runtime_error("no room for the tail");
  };
  EngineCore core(model(), small_config(), cb, dry_run());
  EngineRequest r = request(6);
  r.stop = {text.substr(text.size() - 1) + "\x01"};  // its last character is held back, never matched
  core.add(0, r);
  core.add(1, request(6));
  EXPECT_NO_THROW(run_until_idle(core));
  EXPECT_EQ(got.finished[0], StopReason::Failed);
  EXPECT_EQ(got.errors[0], "on_token callback failed: no room for the tail");
  EXPECT_EQ(got.finished[1], StopReason::Length);
}

// on_error, on_finished and on_config concern no request that could still fail: what they throw
// goes no further, and every request is reported once.
TEST(EngineCoreFailures, ThrowingReportCallbacksGoNoFurther) {
  Recorder got;
  EngineCallbacks cb = got.callbacks();
  cb.on_token = [&, on_token = cb.on_token](RequestId id, std::string_view piece, TokenId token,
                                            const TokenTiming& timing) {
    on_token(id, piece, token, timing);
    if (id == 0 && got.tokens[id] == 2) throw std::runtime_error("token refused");
  };
  cb.on_error = [&, on_error = cb.on_error](RequestId id, const std::string& message) {
    on_error(id, message);
    throw std::bad_alloc();
  };
  cb.on_finished = [&, on_finished = cb.on_finished](RequestId id, StopReason reason) {
    on_finished(id, reason);
    throw std::runtime_error("finish refused");
  };
  cb.on_config = [&, on_config = cb.on_config](bool applied, const std::string& note) {
    on_config(applied, note);
    throw std::runtime_error("config refused");
  };
  EngineCore core(model(), small_config(), cb, dry_run());
  core.add(0, request(8));
  core.add(1, request(8));
  EngineRequest bad = request(8);
  bad.prompt_tokens = {1, 5000};  // rejected at once
  core.add(2, bad);
  EXPECT_NO_THROW(run_until_idle(core));
  EngineConfig naive = core.config();
  naive.attention = "naive";
  EXPECT_NO_THROW(core.apply_config(naive));
  core.add(3, request(4));
  EXPECT_NO_THROW(run_until_idle(core));
  EXPECT_NO_THROW(core.cancel(3));

  EXPECT_EQ(got.finished[0], StopReason::Failed);
  EXPECT_EQ(got.errors[0], "on_token callback failed: token refused");
  EXPECT_EQ(got.finished[1], StopReason::Length);
  EXPECT_EQ(got.finished[2], StopReason::Failed);
  EXPECT_EQ(got.finished[3], StopReason::Length);
  for (RequestId id = 0; id < 4; ++id) EXPECT_EQ(got.finish_calls[id], 1) << id;
  EXPECT_EQ(got.configs, std::vector<std::string>{"applied: attention naive"});
  EXPECT_EQ(core.config().attention, "naive");
}

// A core whose scheduler step `where` throws once, on its third call.
EngineCoreOptions failing_once(const std::string& where) {
  auto calls = std::make_shared<int>(0);
  return dry_run([where, calls](std::string_view at) {
    if (at == where && ++*calls == 3) throw std::bad_alloc();
  });
}

EngineConfig two_running() {
  EngineConfig c = small_config();
  c.scheduler.max_running = 2;
  return c;
}

// Requests 0 and 1 run, 2 waits (max_running 2); scheduler step `where` throws at the third step.
// Both running requests fail with `error`; request 2, and one added afterwards, run to their length.
void expect_failed_step_ends_only_the_running(const std::string& where, const std::string& error) {
  Recorder got;
  EngineCore core(model(), two_running(), got.callbacks(), failing_once(where));
  for (RequestId id = 0; id < 3; ++id) core.add(id, request(10));
  for (int i = 0; i < 3; ++i) core.step();
  EXPECT_EQ(got.finished[0], StopReason::Failed);
  EXPECT_EQ(got.finished[1], StopReason::Failed);
  EXPECT_EQ(got.errors[0], error);
  EXPECT_EQ(got.errors[1], error);
  EXPECT_FALSE(got.finished.contains(2));
  EXPECT_TRUE(core.kv_snapshot().sequences.empty());

  core.add(3, request(4));
  run_until_idle(core);
  EXPECT_EQ(got.finished[2], StopReason::Length);
  EXPECT_EQ(got.tokens[2], 10);
  EXPECT_EQ(got.finished[3], StopReason::Length);
  for (RequestId id = 0; id < 4; ++id) EXPECT_EQ(got.finish_calls[id], 1) << id;
}

// Which requests schedule() was placing is lost with its plan: every running one ends.
TEST(EngineCoreFailures, FailedScheduleEndsTheRunningRequests) {
  expect_failed_step_ends_only_the_running("schedule", "scheduling failed: std::bad_alloc");
}

// complete() fails for the step of requests 0 and 1: that step's requests end.
TEST(EngineCoreFailures, FailedCompleteEndsTheStepsRequests) {
  expect_failed_step_ends_only_the_running("complete", "completing the step failed: std::bad_alloc");
}

}  // namespace
}  // namespace inferscope
