// Exactness through the whole engine: one request's logits at every position it computes, traced as
// a hash of their bytes, whatever way the engine gets there (one prefill, token by token, chunks,
// another KV layout, a preemption and recompute). Equal traces mean bit-identical logits.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/engine/engine_core.h"
#include "core/model/llama_model.h"
#include "tests/support/logit_compare.h"
#include "tests/support/synthetic_model.h"

namespace inferscope::test {

struct LogitsTrace {
  std::map<int32_t, uint64_t> rows;  // position -> FNV-1a hash of its logits' bytes
  std::vector<TokenId> tokens;       // the greedy output
  int32_t recomputed = 0;            // rows that came again (a preempted request recomputes them)
  std::string mismatch;              // a recomputed row that differed from its first computation

  void add(int32_t position, std::span<const float> logits) {
    uint64_t h = 1469598103934665603ull;
    const auto* bytes = reinterpret_cast<const unsigned char*>(logits.data());
    for (size_t i = 0; i < logits.size_bytes(); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
    const auto [it, fresh] = rows.emplace(position, h);
    if (fresh) return;
    ++recomputed;
    if (it->second != h && mismatch.empty()) mismatch = "position " + std::to_string(position) + " recomputed differently";
  }
};

// Both traces hold the same positions with the same bits, and the same greedy tokens.
inline ::testing::AssertionResult same_trace(const LogitsTrace& got, const LogitsTrace& want) {
  if (!got.mismatch.empty()) return ::testing::AssertionFailure() << got.mismatch;
  if (got.tokens != want.tokens) return ::testing::AssertionFailure() << "the greedy tokens differ";
  if (got.rows.size() != want.rows.size()) {
    return ::testing::AssertionFailure() << got.rows.size() << " positions vs " << want.rows.size();
  }
  for (const auto& [position, hash] : want.rows) {
    const auto it = got.rows.find(position);
    if (it == got.rows.end()) return ::testing::AssertionFailure() << "position " << position << " missing";
    if (it->second != hash) return ::testing::AssertionFailure() << "logits differ first at position " << position;
  }
  return ::testing::AssertionSuccess();
}

// Runs requests on one EngineCore until each has finished, tracing the one with id `traced`.
inline LogitsTrace run_traced(const LlamaModel& model, const EngineConfig& config,
                              std::vector<std::pair<RequestId, EngineRequest>> requests, RequestId traced,
                              int64_t* preemptions = nullptr) {
  LogitsTrace trace;
  size_t finished = 0;
  std::string error;
  EngineCallbacks callbacks;
  callbacks.on_logits = [&](RequestId id, int32_t position, std::span<const float> logits) {
    if (id == traced) trace.add(position, logits);
  };
  callbacks.on_token = [&](RequestId id, std::string_view, TokenId token, const TokenTiming&) {
    if (id == traced && token >= 0) trace.tokens.push_back(token);
  };
  callbacks.on_error = [&](RequestId id, const std::string& message) { error += std::to_string(id) + ": " + message; };
  callbacks.on_finished = [&](RequestId, StopReason) { ++finished; };
  EngineCore core(model, config, callbacks);
  const size_t n = requests.size();
  for (auto& [id, request] : requests) core.add(id, std::move(request));
  while (finished < n) core.step();
  if (!error.empty()) ADD_FAILURE() << error;
  if (preemptions != nullptr) *preemptions = core.metrics().snapshot(core.now()).num_preemptions;
  return trace;
}

// `prompt`, then `decode` greedy tokens (end of generation ignored), every position's logits traced.
inline EngineRequest traced_request(const std::vector<TokenId>& prompt, int32_t decode) {
  EngineRequest r;
  r.prompt_tokens = prompt;
  r.max_tokens = decode;
  r.sampling.ignore_eos = true;
  r.logits = LogitsOutput::All;
  return r;
}

// The request alone on an engine with `config`.
inline LogitsTrace trace_alone(const LlamaModel& model, const EngineConfig& config,
                               const std::vector<TokenId>& prompt, int32_t decode) {
  return run_traced(model, config, {{0, traced_request(prompt, decode)}}, 0);
}

// The request admitted after a companion of one block's prompt, in a paged cache that both prompts
// fill: at the first decode the companion needs a block, so the request (the newest) is preempted,
// and it is recomputed once the companion's bs tokens are done. Checks that both happened.
inline LogitsTrace trace_preempted(const LlamaModel& model, EngineConfig config, const std::vector<TokenId>& prompt,
                                   int32_t decode) {
  const int64_t bs = config.kv.block_size;
  auto blocks = [&](int64_t tokens) { return (tokens + bs - 1) / bs; };
  const int64_t n = static_cast<int64_t>(prompt.size());
  // both prompts fill the pool; the request fits alone to its end, the companion (2 blocks at most) too
  const int64_t budget_blocks = std::max({blocks(n) + 1, blocks(n + decode), int64_t{2}});
  config.kv.kind = KvKind::Paged;
  config.kv.prefix_cache = false;
  config.kv.budget_bytes = static_cast<size_t>(budget_blocks * bs) * model.kv_geometry(config.kv_dtype).bytes_per_token();
  EngineRequest companion;
  companion.prompt_tokens.assign(static_cast<size_t>(bs), prompt.front());
  companion.max_tokens = static_cast<int32_t>(bs);
  companion.sampling.ignore_eos = true;
  int64_t preemptions = 0;
  LogitsTrace trace = run_traced(model, config, {{0, std::move(companion)}, {1, traced_request(prompt, decode)}}, 1,
                                 &preemptions);
  EXPECT_GT(preemptions, 0) << "the cache never ran out";
  EXPECT_GT(trace.recomputed, 0) << "nothing was recomputed";
  return trace;
}

// One way of computing a request: its prompt in steps of `chunk` tokens (0: one prefill), in paged
// blocks of `block` tokens (0: the config's) or one contiguous region, and whether it is preempted
// and recomputed (trace_preempted; paged).
struct ComputeWay {
  std::string name;
  int32_t chunk = 0;
  int32_t block = 0;
  bool contiguous = false;
  bool preempted = false;
};

// Each of `ways` gives the bits of one prefill on `base`'s config, for `prompt` and `decode` greedy tokens.
inline void expect_ways_identical(const LlamaModel& model, const EngineConfig& base, const std::vector<TokenId>& prompt,
                                  int32_t decode, const std::vector<ComputeWay>& ways) {
  const LogitsTrace want = trace_alone(model, base, prompt, decode);
  ASSERT_EQ(want.rows.size(), prompt.size() + decode - 1);
  for (const ComputeWay& way : ways) {
    EngineConfig c = base;
    if (way.chunk > 0) c.scheduler.max_batch_tokens = way.chunk;
    if (way.block > 0) c.kv.block_size = way.block;
    if (way.contiguous) c.kv.kind = KvKind::Contiguous;
    const LogitsTrace got = way.preempted ? trace_preempted(model, c, prompt, decode) : trace_alone(model, c, prompt, decode);
    EXPECT_TRUE(same_trace(got, want)) << way.name;
  }
}

// Every way of computing `prompt`, one thing changed at a time: its prompt in steps of each of
// `chunks` tokens, paged blocks of 8 and 32, one contiguous region, and preempted and recomputed.
inline void expect_every_way_identical(const LlamaModel& model, const EngineConfig& base,
                                       const std::vector<TokenId>& prompt, int32_t decode,
                                       const std::vector<int32_t>& chunks) {
  std::vector<ComputeWay> ways;
  for (const int32_t chunk : chunks) ways.push_back({.name = "prompt in steps of " + std::to_string(chunk), .chunk = chunk});
  for (const int32_t block : {8, 32}) ways.push_back({.name = "paged, block " + std::to_string(block), .block = block});
  ways.push_back({.name = "contiguous", .contiguous = true});
  ways.push_back({.name = "preempted and recomputed", .preempted = true});
  expect_ways_identical(model, base, prompt, decode, ways);
}

// A random-weight model with the head size of real ones (64), two query heads per KV head, and
// room for 4096-token prompts.
inline SyntheticModelSpec exactness_model_spec() {
  SyntheticModelSpec spec;
  spec.dim = 256;
  spec.n_heads = 4;
  spec.n_kv_heads = 2;
  spec.ffn_dim = 128;
  spec.vocab = 64;
  spec.context_length = 4200;
  return spec;
}

// n seeded random ids past <unk>, <s>, </s>.
inline std::vector<TokenId> random_prompt(int32_t n, int32_t vocab, uint32_t seed) { return random_tokens(n, vocab, seed, 3); }

}  // namespace inferscope::test
