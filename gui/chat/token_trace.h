// How each token of a reply came about, for the chat's per-token view: the engine's verification of
// each speculative step (EngineCallbacks::on_verify) paired with the tokens that stream after it.
// Plain data (no widgets), kept with the reply and saved with its session.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/spec/verifier.h"

namespace inferscope::gui {

struct TracedToken {
  std::string text;                         // what it added to the reply (a refused draft: its own text)
  TokenOrigin origin = TokenOrigin::Plain;  // accepted draft, corrected, bonus, or plain (no verification)
  bool refused = false;                     // a draft the target refused: shown, but not part of the reply
  float p = 0, q = 0;                       // the target's and the draft's probability of it (0: not known)
};

// "plain", "accepted", "corrected", "bonus" back to the origin; nullopt for anything else.
std::optional<TokenOrigin> token_origin_from_name(const std::string& name);

// Builds one reply's trace. A verification names the tokens about to stream in order; a token that
// matches none of them (the step had no drafts) is plain.
class TraceBuilder {
 public:
  // A speculative step was verified; `refused_piece` is the refused draft's text.
  void verified(const Verification& verification, const std::string& refused_piece);
  // Appends one streamed token to `trace` (id -1: text held back until the end joins the last token).
  void token(std::vector<TracedToken>& trace, const std::string& piece, TokenId id);

 private:
  std::vector<EmittedToken> expected_;  // the verified step's emitted tokens, in stream order
  size_t next_ = 0;                     // the next of them to stream
  std::optional<TracedToken> refused_;  // the refused draft, shown before the step's correction
};

}  // namespace inferscope::gui
