// The engine's callbacks sorted by request, for the HTTP threads that answer them: each request's
// tokens (with the logits row that chose each, when it asked for logits) and its end queue up until
// its thread takes them. The engine thread only appends under a lock, so a slow client never holds
// it up; a row of logits is reduced to the chosen token's log-probability and the top kMaxTopLogprobs
// as its token arrives, so a queue that a client does not read grows by a few bytes per token. A request's events may arrive before its thread first asks (submit returns after the
// engine may have refused it); a dropped request's later events are discarded.
#pragma once
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/engine/engine_request.h"
#include "core/sample/logprobs.h"

namespace inferscope {

struct StreamedToken {
  std::string piece;        // the text it completes (may be empty; token -1: text held back until the end)
  TokenId token = -1;
  // When the request asked for logits: ln p(token) under the raw row that chose it, and that row's
  // kMaxTopLogprobs most likely tokens, most likely first.
  std::optional<double> logprob;
  std::vector<TokenLogprob> top;
};

struct StreamEvents {
  std::vector<StreamedToken> tokens;   // since the last take
  std::optional<StopReason> finished;  // set once the request has ended
  std::string error;                   // why it failed
};

class RequestStreams {
 public:
  // What to build the engine with.
  EngineCallbacks callbacks();
  // Waits until request `id` has events not yet taken, or its end, or `timeout`; returns them
  // (possibly none, on a timeout). Once it returns `finished`, the request is forgotten.
  StreamEvents take(RequestId id, std::chrono::milliseconds timeout);
  // The caller will not take `id` again (its client left): its queued and later events are dropped.
  void drop(RequestId id);

 private:
  struct Entry {
    StreamEvents events;
    std::vector<float> pending_logits;  // the last row, until its token arrives
  };
  Entry* entry(RequestId id);  // nullptr for a dropped request; under mu_

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<RequestId, Entry> entries_;
  std::set<RequestId> dropped_;  // until their on_finished
};

}  // namespace inferscope
