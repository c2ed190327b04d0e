#include "core/server/request_streams.h"

#include "core/server/openai_request.h"

namespace inferscope {

RequestStreams::Entry* RequestStreams::entry(RequestId id) {
  if (dropped_.count(id) != 0) return nullptr;
  return &entries_[id];
}

EngineCallbacks RequestStreams::callbacks() {
  EngineCallbacks cb;
  cb.on_logits = [this](RequestId id, int32_t, std::span<const float> row) {
    std::lock_guard lock(mu_);
    if (Entry* e = entry(id)) e->pending_logits.assign(row.begin(), row.end());
  };
  cb.on_token = [this](RequestId id, std::string_view piece, TokenId token, const TokenTiming&) {
    {
      std::lock_guard lock(mu_);
      Entry* e = entry(id);
      if (e == nullptr) return;
      StreamedToken t{std::string(piece), token, std::nullopt, {}};
      if (token >= 0 && !e->pending_logits.empty()) {
        t.logprob = log_probability(e->pending_logits, token);
        t.top = top_logprobs(e->pending_logits, kMaxTopLogprobs);
      }
      e->pending_logits.clear();
      e->events.tokens.push_back(std::move(t));
    }
    changed_.notify_all();
  };
  cb.on_error = [this](RequestId id, const std::string& message) {
    std::lock_guard lock(mu_);
    if (Entry* e = entry(id)) e->events.error = message;
  };
  cb.on_finished = [this](RequestId id, StopReason reason) {
    {
      std::lock_guard lock(mu_);
      if (dropped_.erase(id) != 0) return;
      entries_[id].events.finished = reason;
    }
    changed_.notify_all();
  };
  return cb;
}

StreamEvents RequestStreams::take(RequestId id, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  changed_.wait_for(lock, timeout, [&] {
    const auto it = entries_.find(id);
    return it != entries_.end() && (!it->second.events.tokens.empty() || it->second.events.finished);
  });
  const auto it = entries_.find(id);
  if (it == entries_.end()) return {};
  StreamEvents out = std::move(it->second.events);
  it->second.events = {};
  if (out.finished) entries_.erase(it);
  return out;
}

void RequestStreams::drop(RequestId id) {
  std::lock_guard lock(mu_);
  const auto it = entries_.find(id);
  // An ended request has nothing more to come; a running one's remaining events are discarded.
  if (it != entries_.end() && it->second.events.finished) {
    entries_.erase(it);
    return;
  }
  if (it != entries_.end()) entries_.erase(it);
  dropped_.insert(id);
}

}  // namespace inferscope
