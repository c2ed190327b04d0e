#include "gui/chat/token_trace.h"

#include "core/engine/engine_request.h"

namespace inferscope::gui {

std::optional<TokenOrigin> token_origin_from_name(const std::string& name) {
  for (TokenOrigin o : {TokenOrigin::Plain, TokenOrigin::Accepted, TokenOrigin::Corrected, TokenOrigin::Bonus}) {
    if (name == token_origin_name(o)) return o;
  }
  return std::nullopt;
}

void TraceBuilder::verified(const Verification& v, const std::string& refused_piece) {
  // Tokens of the previous step that never streamed (a stop string cut them) are dropped.
  expected_ = v.emitted;
  next_ = 0;
  refused_.reset();
  if (v.rejected) refused_ = TracedToken{refused_piece, TokenOrigin::Plain, true, v.refused.p, v.refused.q};
}

void TraceBuilder::token(std::vector<TracedToken>& trace, const std::string& piece, TokenId id) {
  if (id == kRemoteChunk) {  // a server's chunk: one cell, no ids to match with a verification
    trace.push_back({piece});
    return;
  }
  if (id < 0) {
    if (trace.empty() || trace.back().refused) trace.push_back({});
    trace.back().text += piece;
    return;
  }
  if (next_ >= expected_.size() || expected_[next_].id != id) {
    expected_.clear();  // not the verified step's: a plain decode
    trace.push_back({piece});
    return;
  }
  const EmittedToken& e = expected_[next_];
  // The refused draft stood where the correction now stands: after the accepted drafts.
  if (refused_ && e.origin == TokenOrigin::Corrected) {
    trace.push_back(*refused_);
    refused_.reset();
  }
  trace.push_back({piece, e.origin, false, e.p, e.q});
  ++next_;
}

}  // namespace inferscope::gui
