// The Engine on stories260K: many concurrent greedy requests give exactly the text each gives alone
// (through chunked prefill, preemption, static batching and a cache swap mid-run); cancel frees
// blocks; a bad request, or one whose callback throws, fails alone; stop strings; metrics; shutdown
// with requests in flight.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/engine/engine.h"
#include "core/engine/prompt.h"
#include "core/model/llama_model.h"
#include "core/sample/sampler.h"
#include "tests/support/engine_runs.h"
#include "tests/support/test_models.h"

namespace inferscope::test {
namespace {

const std::vector<std::string> kPrompts = {
    "Once upon a time", "The little dog", "Lily and Tom went to the park. They saw a big", "One day",
    "The sun was", "Sam had a red ball. He", "There was a girl named Sue who loved to", "Mom said"};

// What the callbacks delivered, per request; waiting is bounded so a bug fails instead of hanging.
struct Collector {
  std::mutex mu;
  std::condition_variable cv;
  std::map<RequestId, std::string> text;
  std::map<RequestId, int32_t> tokens;
  std::map<RequestId, std::vector<TokenId>> ids;
  std::map<RequestId, StopReason> finished;
  std::map<RequestId, int32_t> finish_calls;
  std::map<RequestId, std::string> errors;
  std::map<RequestId, double> first_token_since_arrival_s;

  EngineCallbacks callbacks() {
    EngineCallbacks c;
    c.on_token = [this](RequestId id, std::string_view piece, TokenId token, const TokenTiming& timing) {
      std::lock_guard lock(mu);
      text[id] += piece;
      if (token >= 0) {
        first_token_since_arrival_s.try_emplace(id, timing.since_arrival_s);
        ++tokens[id];
        ids[id].push_back(token);
      }
      cv.notify_all();
    };
    c.on_finished = [this](RequestId id, StopReason reason) {
      std::lock_guard lock(mu);
      finished[id] = reason;
      ++finish_calls[id];
      cv.notify_all();
    };
    c.on_error = [this](RequestId id, const std::string& message) {
      std::lock_guard lock(mu);
      errors[id] = message;
    };
    return c;
  }
  template <typename Pred>
  bool wait(Pred pred) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(60), pred);
  }
  bool wait_finished(size_t n) {
    return wait([&] { return finished.size() >= n; });
  }
};

struct Alone {
  std::string text;
  StopReason reason;
};

// The single-sequence reference: the request alone on its own single-threaded engine.
Alone alone(const LlamaModel& model, const std::string& prompt, int32_t max_tokens) {
  EngineConfig config;
  config.threads = 1;
  const RequestOutcome r = test::engine_greedy(model, config, encode_prompt(model, prompt), max_tokens);
  return {r.text, r.reason};
}

EngineConfig small_config() {
  EngineConfig c;
  c.threads = 2;
  return c;
}

EngineRequest text_request(const std::string& prompt, int32_t max_tokens) {
  EngineRequest r;
  r.prompt = prompt;
  r.max_tokens = max_tokens;
  return r;
}

// Runs every prompt at once through an engine with `config` and checks each against alone().
void expect_same_as_alone(const LlamaModel& model, const EngineConfig& config, int32_t max_tokens,
                          int64_t* preemptions = nullptr) {
  Collector got;
  std::map<RequestId, size_t> prompt_of;
  {
    Engine engine(model, config, got.callbacks());
    for (size_t i = 0; i < kPrompts.size(); ++i) prompt_of[engine.submit(text_request(kPrompts[i], max_tokens))] = i;
    ASSERT_TRUE(got.wait_finished(kPrompts.size()));
    if (preemptions) *preemptions = engine.metrics_snapshot().num_preemptions;
  }
  for (const auto& [id, i] : prompt_of) {
    const Alone ref = alone(model, kPrompts[i], max_tokens);
    EXPECT_EQ(got.text[id], ref.text) << "prompt " << i << ": " << kPrompts[i];
    EXPECT_EQ(got.finished[id], ref.reason) << "prompt " << i;
    EXPECT_EQ(got.finish_calls[id], 1);
  }
}

TEST(Engine, ConcurrentGreedyRequestsMatchEachAloneWithChunkedPrefill) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  EngineConfig c = small_config();
  c.scheduler.max_batch_tokens = 8;  // prompts of up to 16 tokens go in chunks, behind the decodes
  c.scheduler.max_running = 5;
  expect_same_as_alone(*model, c, 48);
}

// A request for every logit from position 6 on, fed in chunks of 4: it gets exactly positions 6..n-1
// (the second chunk computes two rows, not four), each with the bits the same position has when every
// row is asked for.
TEST(Engine, LogitsFromAPositionHandsOutThoseRowsWithTheSameBits) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  EngineConfig c = small_config();
  c.scheduler.max_batch_tokens = 4;
  const std::vector<TokenId> prompt = encode_prompt(*model, "Lily and Tom went to the park. They saw a big");
  ASSERT_GT(prompt.size(), 9u);
  const std::vector<float> every = engine_logits(*model, c, prompt);
  const size_t vocab = static_cast<size_t>(model->config().vocab_size);
  SyncEngine engine(*model, c);
  EngineRequest r;
  r.prompt_tokens = prompt;
  r.max_tokens = 1;
  r.logits = LogitsOutput::All;
  r.logits_from = 6;
  std::vector<int32_t> positions;
  engine.run(std::move(r), {}, [&](RequestId, int32_t position, std::span<const float> row) {
    positions.push_back(position);
    const std::span<const float> want(every.data() + static_cast<size_t>(position) * vocab, vocab);
    EXPECT_TRUE(std::equal(row.begin(), row.end(), want.begin())) << "position " << position;
  });
  std::vector<int32_t> expected(prompt.size() - 6);
  std::iota(expected.begin(), expected.end(), 6);
  EXPECT_EQ(positions, expected);
}

TEST(Engine, PreemptedRequestsResumeExactly) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  EngineConfig c = small_config();
  c.kv.block_size = 8;
  c.kv.budget_bytes = model->kv_geometry(DType::F16).bytes_per_token() * 8 * 14;  // 112 slots for 8 x ~70
  int64_t preemptions = 0;
  expect_same_as_alone(*model, c, 60, &preemptions);
  EXPECT_GT(preemptions, 0);
}

// TTFT is the first streamed token's time, preempted or not: a recompute after a preemption prefills
// again but streams nothing twice, and moves no one's TTFT.
TEST(Engine, APreemptedRequestsTtftIsWhenItsFirstTokenStreamed) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  EngineConfig c = small_config();
  c.kv.block_size = 8;
  c.kv.budget_bytes = model->kv_geometry(DType::F16).bytes_per_token() * 8 * 14;
  Collector got;
  Engine engine(*model, c, got.callbacks());
  for (const std::string& prompt : kPrompts) engine.submit(text_request(prompt, 60));
  ASSERT_TRUE(got.wait_finished(kPrompts.size()));
  const EngineMetricsSnapshot m = engine.metrics_snapshot();
  int preempted = 0;
  for (const RequestMetrics& r : m.requests) {
    std::lock_guard lock(got.mu);
    ASSERT_TRUE(got.first_token_since_arrival_s.contains(r.id)) << r.id;
    EXPECT_DOUBLE_EQ(r.time_to_first_token_seconds, got.first_token_since_arrival_s[r.id]) << "request " << r.id;
    EXPECT_EQ(got.tokens[r.id], r.generation_tokens) << "request " << r.id << " streamed a token twice";
    preempted += r.num_preemptions > 0;
  }
  EXPECT_GT(preempted, 0);
}

TEST(Engine, StaticBatchingGivesTheSameText) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  EngineConfig c = small_config();
  c.scheduler.policy = SchedulerPolicy::Static;
  c.scheduler.max_running = 3;
  expect_same_as_alone(*model, c, 40);
}

TEST(Engine, SpeculatingRequestsMatchEachAloneThroughPreemption) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  for (SpecMode mode : {SpecMode::Ngram, SpecMode::EarlyExit, SpecMode::SelfQuant}) {
    EngineConfig c = small_config();
    c.spec.mode = mode;
    c.spec.draft_layers = 2;
    c.spec.draft_quant = WeightQuant::Q8;
    c.kv.block_size = 8;
    // 112 slots for 8 requests of ~70 tokens (self-quant shares them with its draft's cache): preemptions.
    const size_t share = mode == SpecMode::SelfQuant ? 2 : 1;
    c.kv.budget_bytes = model->kv_geometry(DType::F16).bytes_per_token() * 8 * 14 * share;
    int64_t preemptions = 0;
    expect_same_as_alone(*model, c, 60, &preemptions);
    EXPECT_GT(preemptions, 0) << spec_mode_name(mode);
  }
}

TEST(Engine, CancelMidStreamFreesItsBlocks) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  Collector got;
  Engine engine(*model, small_config(), got.callbacks());
  const RequestId id = engine.submit(text_request("Once upon a time", 0));  // runs to the context
  ASSERT_TRUE(got.wait([&] { return got.tokens[id] >= 5; }));
  engine.cancel(id);
  ASSERT_TRUE(got.wait_finished(1));
  EXPECT_EQ(got.finished[id], StopReason::Aborted);
  EXPECT_LT(got.tokens[id], 400);
  const KvSnapshot snap = *engine.kv_snapshot();
  EXPECT_TRUE(snap.sequences.empty());
  for (const KvSnapshot::Block& b : snap.blocks) EXPECT_TRUE(b.owners.empty());
  // The metrics say so too, with no step after the cancel.
  const EngineMetricsSnapshot m = engine.metrics_snapshot();
  EXPECT_EQ(m.num_requests_running, 0);
  EXPECT_EQ(m.kv.kv_cache_usage_perc(), 0.0);
}

TEST(Engine, BadRequestsFailAloneWhileOthersFinish) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  Collector got;
  RequestId too_long, bad_token, bad_sampling, good;
  {
    Engine engine(*model, small_config(), got.callbacks());
    EngineRequest big;
    big.prompt_tokens.assign(static_cast<size_t>(model->config().context_length) + 10, 100);  // past the context
    too_long = engine.submit(big);
    EngineRequest bad;
    bad.prompt_tokens = {1, 5000};
    bad_token = engine.submit(bad);
    EngineRequest no_nucleus = text_request(kPrompts[1], 30);
    no_nucleus.sampling.top_p = 0.0f;
    bad_sampling = engine.submit(no_nucleus);
    good = engine.submit(text_request(kPrompts[0], 30));
    ASSERT_TRUE(got.wait_finished(4));
  }
  EXPECT_EQ(got.finished[too_long], StopReason::Failed);
  EXPECT_NE(got.errors[too_long].find("context length"), std::string::npos) << got.errors[too_long];
  EXPECT_EQ(got.finished[bad_token], StopReason::Failed);
  EXPECT_NE(got.errors[bad_token].find("5000"), std::string::npos) << got.errors[bad_token];
  EXPECT_EQ(got.finished[bad_sampling], StopReason::Failed);
  EXPECT_NE(got.errors[bad_sampling].find("top_p must be in (0, 1]"), std::string::npos) << got.errors[bad_sampling];
  EXPECT_EQ(got.text[good], alone(*model, kPrompts[0], 30).text);
  EXPECT_FALSE(got.errors.contains(good));
}

TEST(Engine, StopStringEndsTheReplyBeforeIt) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  const std::string full = alone(*model, kPrompts[0], 40).text;
  ASSERT_GT(full.size(), 20u);
  const std::string stop = full.substr(12, 4);
  Collector got;
  Engine engine(*model, small_config(), got.callbacks());
  EngineRequest r = text_request(kPrompts[0], 40);
  r.stop = {stop};
  const RequestId id = engine.submit(r);
  ASSERT_TRUE(got.wait_finished(1));
  EXPECT_EQ(got.text[id], full.substr(0, full.find(stop)));
  EXPECT_EQ(got.finished[id], StopReason::StopString);
}

// A callback that throws for one request (on the engine thread) fails that request alone: the
// request batched with it finishes as it would alone, and the thread goes on to serve the next one.
TEST(Engine, ThrowingCallbackFailsItsRequestAndTheEngineGoesOn) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  for (const bool exhaustion : {false, true}) {
    Collector got;
    EngineCallbacks cb = got.callbacks();
    cb.on_token = [&got, exhaustion, on_token = cb.on_token](RequestId id, std::string_view piece, TokenId token,
                                                             const TokenTiming& timing) {
      on_token(id, piece, token, timing);
      if (id != 0 || got.ids[0].size() != 3) return;  // only this (the engine) thread writes ids
      if (exhaustion) throw std::bad_alloc();
      throw std::runtime_error("the window is gone");
    };
    {
      Engine engine(*model, small_config(), cb);
      ASSERT_EQ(engine.submit(text_request(kPrompts[0], 30)), 0);
      engine.submit(text_request(kPrompts[1], 30));
      ASSERT_TRUE(got.wait_finished(2));
      engine.submit(text_request(kPrompts[2], 30));
      ASSERT_TRUE(got.wait_finished(3));
    }
    const std::string thrown = exhaustion ? "std::bad_alloc" : "the window is gone";
    EXPECT_EQ(got.finished[0], StopReason::Failed) << thrown;
    EXPECT_EQ(got.errors[0], "on_token callback failed: " + thrown);
    EXPECT_EQ(got.ids[0].size(), 3u) << thrown;
    for (RequestId id : {1, 2}) {
      const Alone ref = alone(*model, kPrompts[static_cast<size_t>(id)], 30);
      EXPECT_EQ(got.text[id], ref.text) << thrown << ", request " << id;
      EXPECT_EQ(got.finished[id], ref.reason) << thrown << ", request " << id;
      EXPECT_FALSE(got.errors.contains(id)) << thrown << ", request " << id;
    }
    for (RequestId id : {0, 1, 2}) EXPECT_EQ(got.finish_calls[id], 1) << thrown << ", request " << id;
  }
}

// The collector's callbacks, plus every config callback as "applied: ..." or "rejected: ...".
EngineCallbacks callbacks_with_config_notes(Collector& got, std::vector<std::string>& notes) {
  EngineCallbacks cb = got.callbacks();
  cb.on_config = [&got, &notes](bool applied, const std::string& note) {
    {
      std::lock_guard lock(got.mu);
      notes.push_back((applied ? "applied: " : "rejected: ") + note);
    }
    got.cv.notify_all();
  };
  return cb;
}

TEST(Engine, CacheSwapMidRunPreemptsAndResumesExactly) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  Collector got;
  std::vector<std::string> notes;
  const EngineCallbacks cb = callbacks_with_config_notes(got, notes);
  std::map<RequestId, size_t> prompt_of;
  {
    Engine engine(*model, small_config(), cb);
    for (size_t i = 0; i < 4; ++i) prompt_of[engine.submit(text_request(kPrompts[i], 50))] = i;
    ASSERT_TRUE(got.wait([&] { return got.tokens.size() == 4 && got.tokens[0] >= 3; }));
    EngineConfig c = small_config();
    c.kv.kind = KvKind::Contiguous;
    engine.set_config(c);
    EngineConfig bad = small_config();
    bad.kv.block_size = 7;
    engine.set_config(bad);  // rejected: the contiguous cache stays
    ASSERT_TRUE(got.wait([&] { return notes.size() == 2; }));  // applied between steps, in order
    ASSERT_TRUE(got.wait_finished(4));
  }
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("applied: KV contiguous: new KV cache"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("rejected"), std::string::npos) << notes[1];
  for (const auto& [id, i] : prompt_of) EXPECT_EQ(got.text[id], alone(*model, kPrompts[i], 50).text) << i;
}

TEST(Engine, AttentionSwitchMidRunKeepsGreedyText) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  Collector got;
  std::vector<std::string> notes;
  const EngineCallbacks cb = callbacks_with_config_notes(got, notes);
  std::map<RequestId, size_t> prompt_of;
  {
    EngineConfig c = small_config();
    c.attention = "naive";
    Engine engine(*model, c, cb);
    for (size_t i = 0; i < 3; ++i) prompt_of[engine.submit(text_request(kPrompts[i], 200))] = i;
    ASSERT_TRUE(got.wait([&] { return got.tokens.size() == 3 && got.tokens[0] >= 3; }));
    c.attention = "flash";
    engine.set_config(c);
    c.attention = "sparse";
    engine.set_config(c);  // rejected: flash stays
    ASSERT_TRUE(got.wait([&] { return notes.size() == 2; }));  // applied between steps, in order
    ASSERT_TRUE(got.wait_finished(3));
  }
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("applied: attention flash"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("rejected"), std::string::npos) << notes[1];
  // naive and flash compute the same function: the greedy text does not change at the switch
  for (const auto& [id, i] : prompt_of) EXPECT_EQ(got.text[id], alone(*model, kPrompts[i], 200).text) << i;
}

TEST(Engine, QuantizationSwitchMidChatContinuesExactlyOnTheNewWeights) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  constexpr int32_t kMaxTokens = 300;
  Collector got;
  std::vector<std::string> notes;
  size_t switched_at = 0;  // tokens of the request when the q8 weights took over
  Engine* engine = nullptr;
  EngineCallbacks cb = got.callbacks();
  const auto on_token = cb.on_token;
  cb.on_token = [&](RequestId id, std::string_view piece, TokenId token, const TokenTiming& timing) {
    on_token(id, piece, token, timing);
    const size_t n = got.ids[id].size();  // only this (the engine) thread writes it
    if (n == 5) {
      EngineConfig c = small_config();
      c.quant = WeightQuant::Q8;
      engine->set_config(c);
    }
    if (n == 6) {
      // Hold the engine here until the background conversion is through, so the switch lands mid-reply
      // (unless it was quick enough to land before this token: the progress is reset once it has).
      const auto switched = [&] {
        std::lock_guard lock(got.mu);
        return switched_at != 0;
      };
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (!switched() && engine->metrics_snapshot().conversion_progress < 1.0 &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  };
  cb.on_config = [&](bool applied, const std::string& note) {
    std::lock_guard lock(got.mu);
    notes.push_back((applied ? "applied: " : "rejected: ") + note);
    if (note.find("weights now") != std::string::npos) switched_at = got.ids[0].size();
    got.cv.notify_all();
  };
  EngineRequest request = text_request(kPrompts[0], kMaxTokens);
  request.sampling.ignore_eos = true;  // a long reply, so the switch lands in its middle
  EngineMetricsSnapshot before, after;
  {
    Engine e(*model, small_config(), cb);
    engine = &e;
    before = e.metrics_snapshot();
    ASSERT_EQ(e.submit(request), 0);
    ASSERT_TRUE(got.wait_finished(1));
    after = e.metrics_snapshot();
  }
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("applied: weights q8; converting the weights to q8 in the background"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[1].find("applied: weights now q8"), std::string::npos) << notes[1];
  EXPECT_EQ(got.finished[0], StopReason::Length);
  ASSERT_EQ(got.ids[0].size(), static_cast<size_t>(kMaxTokens));
  ASSERT_GE(switched_at, 5u) << "asked for after the fifth token";
  ASSERT_LT(switched_at, static_cast<size_t>(kMaxTokens));
  EXPECT_EQ(before.weights_quant, "native");
  EXPECT_EQ(after.weights_quant, "q8");
  EXPECT_LT(after.weight_bytes, before.weight_bytes / 2);
  EXPECT_GE(after.num_preemptions, 1) << "the running request is recomputed on the new weights";

  // After the switch the reply is exactly what q8 weights generate from the prompt and the tokens before it.
  EngineRequest rest;
  rest.prompt_tokens = encode_prompt(*model, kPrompts[0]);
  rest.prompt_tokens.insert(rest.prompt_tokens.end(), got.ids[0].begin(), got.ids[0].begin() + switched_at);
  rest.max_tokens = kMaxTokens - static_cast<int32_t>(switched_at);
  rest.sampling.ignore_eos = true;
  Collector q8;
  {
    EngineConfig c = small_config();
    c.quant = WeightQuant::Q8;
    Engine e(*model, c, q8.callbacks());
    e.submit(rest);
    ASSERT_TRUE(q8.wait_finished(1));
  }
  EXPECT_EQ(q8.ids[0], std::vector<TokenId>(got.ids[0].begin() + switched_at, got.ids[0].end()));
}

TEST(Engine, MetricsFollowEveryRequest) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  Collector got;
  Engine engine(*model, small_config(), got.callbacks());
  for (int i = 0; i < 3; ++i) engine.submit(text_request(kPrompts[static_cast<size_t>(i)], 20));
  ASSERT_TRUE(got.wait_finished(3));
  const EngineMetricsSnapshot m = engine.metrics_snapshot();
  EXPECT_EQ(m.requests_finished, 3);
  EXPECT_EQ(m.num_requests_running, 0);
  ASSERT_EQ(m.requests.size(), 3u);
  int64_t generated = 0, prefill = 0;
  for (const RequestMetrics& r : m.requests) {
    EXPECT_GE(r.request_queue_time_seconds, 0);
    EXPECT_GE(r.time_to_first_token_seconds, r.request_queue_time_seconds);
    EXPECT_GE(r.e2e_request_latency_seconds, r.time_to_first_token_seconds);
    EXPECT_EQ(r.inter_token_latency_seconds.size(), static_cast<size_t>(r.generation_tokens - 1));
    EXPECT_EQ(r.generation_tokens, got.tokens[r.id]);
    EXPECT_EQ(r.finish_reason, stop_reason_name(got.finished[r.id]));
    generated += r.generation_tokens;
    prefill += r.prompt_tokens;
  }
  EXPECT_EQ(m.generation_tokens_total, generated);
  int64_t step_prefill = 0, step_decode = 0;
  for (const StepMetrics& s : m.steps) {
    step_prefill += s.prefill_tokens;
    step_decode += s.decode_tokens;
  }
  EXPECT_EQ(step_prefill, prefill);  // no preemption: every prompt token is computed once
  for (const StepMetrics& s : m.steps) {
    EXPECT_GT(s.attention_scratch_bytes, 0u);
    EXPECT_GT(s.attention_seconds, 0.0);
    EXPECT_LE(s.attention_seconds, s.duration_s);
  }
  EXPECT_GT(step_decode, 0);
  EXPECT_GT(m.decode_tokens_per_second, 0);
}

TEST(Engine, ShutdownWithRequestsInFlightAbortsEachOnce) {
  INFERSCOPE_REQUIRE_FILE(path, shared_model_path("stories260K.gguf"));
  const auto model = LlamaModel::load(path);
  Collector got;
  std::vector<RequestId> ids;
  {
    Engine engine(*model, small_config(), got.callbacks());
    for (const std::string& p : kPrompts) ids.push_back(engine.submit(text_request(p, 0)));
    ASSERT_TRUE(got.wait([&] { return !got.tokens.empty(); }));
  }  // the destructor aborts the rest and joins
  for (RequestId id : ids) {
    EXPECT_EQ(got.finish_calls[id], 1) << id;
    EXPECT_TRUE(got.finished[id] == StopReason::Aborted || got.finished[id] == StopReason::EndOfGeneration) << id;
  }
}

TEST(Engine, ShutdownDuringAWeightConversionStopsItCleanly) {
  INFERSCOPE_REQUIRE_FILE(path, demo_model_path());
  const auto model = LlamaModel::load(path);
  Collector got;
  std::vector<std::string> notes;
  const EngineCallbacks cb = callbacks_with_config_notes(got, notes);
  {
    Engine engine(*model, small_config(), cb);
    EngineConfig c = small_config();
    c.quant = WeightQuant::Q8;
    engine.set_config(c);
    // The demo model's 135M weights take a while: shut down while the worker is converting them.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (engine.metrics_snapshot().converting_to.empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(engine.metrics_snapshot().converting_to, "q8");
  }  // the engine thread cancels the conversion and joins its worker before the engine's state goes
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("converting the weights to q8 in the background"), std::string::npos) << notes[0];
}

}  // namespace
}  // namespace inferscope::test
