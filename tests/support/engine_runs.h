// Running one request through the engine (SyncEngine: the path every front end takes) and keeping
// what tests compare: the logits it computed, its greedy tokens.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/engine/sync_engine.h"
#include "core/model/llama_model.h"

namespace inferscope::test {

// Logits at every position of `tokens` (n x vocab), fed as one request's prompt on an empty cache.
inline std::vector<float> engine_logits(const LlamaModel& model, const EngineConfig& config,
                                        std::span<const TokenId> tokens) {
  const size_t vocab = static_cast<size_t>(model.config().vocab_size);
  SyncEngine engine(model, config);
  EngineRequest r;
  r.prompt_tokens.assign(tokens.begin(), tokens.end());
  r.max_tokens = 1;
  r.sampling.ignore_eos = true;
  r.logits = LogitsOutput::All;
  std::vector<float> all(tokens.size() * vocab);
  const RequestOutcome out = engine.run(std::move(r), {}, [&](RequestId, int32_t position, std::span<const float> row) {
    std::copy(row.begin(), row.end(), all.begin() + static_cast<ptrdiff_t>(position * vocab));
  });
  if (out.reason == StopReason::Failed) throw std::runtime_error("engine_logits: " + out.error);
  return all;
}

// Greedy output of `prompt` (at most n tokens, ending at an end-of-generation token).
inline RequestOutcome engine_greedy(const LlamaModel& model, const EngineConfig& config,
                                    std::vector<TokenId> prompt, int32_t n) {
  SyncEngine engine(model, config);
  EngineRequest r;
  r.prompt_tokens = std::move(prompt);
  r.max_tokens = n;
  return engine.run(std::move(r));
}

// A greedy request's outcome and the logits each output token was picked from.
struct GreedyRun {
  RequestOutcome outcome;
  std::vector<std::vector<float>> rows;
};

inline GreedyRun engine_greedy_with_logits(const LlamaModel& model, const EngineConfig& config,
                                           std::vector<TokenId> prompt, int32_t n) {
  SyncEngine engine(model, config);
  EngineRequest r;
  r.prompt_tokens = std::move(prompt);
  r.max_tokens = n;
  r.logits = LogitsOutput::Sampled;
  GreedyRun run;
  run.outcome = engine.run(std::move(r), {}, [&](RequestId, int32_t, std::span<const float> row) {
    run.rows.emplace_back(row.begin(), row.end());
  });
  return run;
}

// Bitwise equality of two float rows, naming the first difference.
inline ::testing::AssertionResult bit_identical(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes " << a.size() << " vs " << b.size();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs " << b[i] << " (of "
                                           << a.size() << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace inferscope::test
