#include "core/engine/output_processor.h"

#include "core/engine/prompt.h"

namespace inferscope {

OutputProcessor::OutputProcessor(const Tokenizer& tokenizer, const EngineCallbacks& callbacks, EngineMetrics& metrics,
                                 const EngineClock& clock)
    : tokenizer_(tokenizer), callbacks_(callbacks), metrics_(metrics), clock_(clock) {}

void OutputProcessor::add(RequestId id, std::vector<std::string> stop, double arrival_s) {
  live_.emplace(id, Live{Utf8StreamDecoder(), StopMatcher(std::move(stop)), arrival_s, arrival_s});
}

TokenTiming OutputProcessor::shown_now(Live& live) {
  const double t = clock_.now();
  const TokenTiming timing{t, t - live.arrival_s, t - live.last_token_s};
  live.last_token_s = t;
  return timing;
}

bool OutputProcessor::stream(RequestId id, std::span<const TokenId> tokens, size_t from) {
  for (size_t i = from; i < tokens.size(); ++i) {
    Live& live = live_.at(id);
    // the previous token decides how this one's piece starts (a leading space, a byte run)
    const std::string piece = live.stop.push(live.decoder.push(output_piece(tokenizer_, tokens[i - 1], tokens[i])));
    const bool stopped = live.stop.stopped();
    const TokenTiming timing = shown_now(live);
    metrics_.on_token(id, timing.time_s);
    if (callbacks_.on_token) callbacks_.on_token(id, piece, tokens[i], timing);
    // a callback may have ended the request
    if (stopped || !live_.contains(id)) return true;
  }
  return false;
}

void OutputProcessor::flush(RequestId id) {
  Live& live = live_.at(id);
  if (live.stop.stopped()) return;
  const std::string tail = live.stop.push(live.decoder.flush()) + live.stop.flush();
  if (!tail.empty() && callbacks_.on_token) callbacks_.on_token(id, tail, -1, shown_now(live));
}

}  // namespace inferscope
