#include "core/engine/sync_engine.h"

#include <algorithm>

namespace inferscope {

SyncEngine::SyncEngine(const LlamaModel& model, EngineConfig config, EngineCoreOptions options)
    : core_(model, std::move(config), callbacks(), std::move(options)) {}

EngineCallbacks SyncEngine::callbacks() {
  EngineCallbacks c;
  c.on_token = [this](RequestId, std::string_view piece, TokenId token, const TokenTiming&) {
    if (token >= 0) current_.outcome.tokens.push_back(token);
    current_.outcome.text += piece;
    if (!piece.empty() && current_.on_text) current_.on_text(piece);
  };
  c.on_logits = [this](RequestId id, int32_t position, std::span<const float> logits) {
    if (current_.on_logits) current_.on_logits(id, position, logits);
  };
  c.on_error = [this](RequestId, const std::string& message) { current_.outcome.error = message; };
  c.on_finished = [this](RequestId, StopReason reason) {
    current_.outcome.reason = reason;
    current_.finished = true;
  };
  return c;
}

RequestOutcome SyncEngine::run(EngineRequest request, const TextFn& on_text, const LogitsFn& on_logits) {
  current_ = Current{next_id_++, {}, on_text, on_logits, false};
  core_.add(current_.id, std::move(request));
  while (!current_.finished) core_.step();
  const EngineMetricsSnapshot snap = core_.metrics().snapshot(core_.now());
  const auto it = std::find_if(snap.requests.begin(), snap.requests.end(),
                               [&](const RequestMetrics& m) { return m.id == current_.id; });
  if (it != snap.requests.end()) current_.outcome.metrics = *it;
  return std::move(current_.outcome);
}

}  // namespace inferscope
