// An EngineCore driven in the caller's thread, one request at a time: run() adds a request and steps
// the core until it ends. The CLI's generate, bench and perplexity run this way, through the same
// scheduler, KV cache and model executor that the Engine (the GUI, chat, serve-sim) runs.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/engine/engine_core.h"

namespace inferscope {

struct RequestOutcome {
  std::vector<TokenId> tokens;  // generated ids (an end-of-generation token excluded)
  std::string text;             // their text, stop strings cut
  StopReason reason = StopReason::Length;
  std::string error;            // why it failed (reason Failed)
  RequestMetrics metrics;       // the engine's record of it (TTFT, latencies, token counts)
};

// Text of the request as it streams (whole UTF-8 characters).
using TextFn = std::function<void(std::string_view text)>;

class SyncEngine {
 public:
  // Builds the core; throws std::invalid_argument for a bad config.
  SyncEngine(const LlamaModel& model, EngineConfig config, EngineCoreOptions options = {});

  // Runs `request` to its end. on_logits receives the logits it asks for (request.logits).
  RequestOutcome run(EngineRequest request, const TextFn& on_text = {}, const LogitsFn& on_logits = {});

  EngineCore& core() { return core_; }
  const EngineCore& core() const { return core_; }
  // The configuration in use, defaults resolved (context length, KV budget).
  const EngineConfig& config() const { return core_.config(); }

 private:
  // Where the core's callbacks go while run() drives a request.
  struct Current {
    RequestId id = -1;
    RequestOutcome outcome;
    TextFn on_text;
    LogitsFn on_logits;
    bool finished = false;
  };
  EngineCallbacks callbacks();

  Current current_;
  RequestId next_id_ = 0;
  EngineCore core_;  // last: its callbacks point at current_
};

}  // namespace inferscope
