// Turns each request's new tokens into streamed text, as vLLM v1's output processor does: pieces
// decoded across token boundaries into whole UTF-8 characters, stop strings held back until they
// can no longer match, the held-back tail at the end, and each token's timing for the callbacks and
// the metrics. The step loop decides what runs; this decides what the caller sees.
#pragma once
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/engine/engine_clock.h"
#include "core/engine/engine_metrics.h"
#include "core/engine/engine_request.h"
#include "core/engine/stop_strings.h"
#include "core/tokenizer/tokenizer.h"

namespace inferscope {

class OutputProcessor {
 public:
  // Everything given must outlive the processor.
  OutputProcessor(const Tokenizer& tokenizer, const EngineCallbacks& callbacks, EngineMetrics& metrics,
                  const EngineClock& clock);

  // Starts streaming `id`, which arrived at `arrival_s`; its text ends before the first of `stop`.
  void add(RequestId id, std::vector<std::string> stop, double arrival_s);
  bool contains(RequestId id) const { return live_.contains(id); }
  bool empty() const { return live_.empty(); }
  // Some live request (the lowest id); the processor must not be empty.
  RequestId first() const { return live_.begin()->first; }
  // Streams `tokens[from..]`, the output this step gave `id` (tokens[from - 1] gives the first piece
  // its context). True when a stop string ended it (the rest is never shown) or on_token ended the
  // request. Throws what on_token throws.
  bool stream(RequestId id, std::span<const TokenId> tokens, size_t from);
  // Hands on_token the text held back for a possible stop string or an unfinished character (once a
  // stop string has matched, there is none). Throws what on_token throws.
  void flush(RequestId id);
  void erase(RequestId id) { live_.erase(id); }

 private:
  struct Live {
    Utf8StreamDecoder decoder;
    StopMatcher stop;
    double arrival_s = 0, last_token_s = 0;
  };
  // The timing of a piece shown now, and the request's clock moved on to it.
  TokenTiming shown_now(Live& live);

  const Tokenizer& tokenizer_;
  const EngineCallbacks& callbacks_;
  EngineMetrics& metrics_;
  const EngineClock& clock_;
  std::map<RequestId, Live> live_;
};

}  // namespace inferscope
