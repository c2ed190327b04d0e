// Prompt lookup / n-gram speculation (no model): the longest suffix of the sequence, n tokens for n
// from ngram_max down to ngram_min, is looked up earlier in the same sequence (prompt and output), and
// the tokens that followed it are proposed. Among the earlier places that match n tokens, the one
// whose match runs furthest back wins (the source being copied, over a coincidence), the most recent
// among equals. A draft is no longer than that match (a two-token coincidence earns two tokens, a long
// copy the full k), and it stops after an end-of-generation token (the end of a copied span: nothing
// after it can be kept). q is one-hot. Cheap and strong where the output copies its input (code
// edits, quoting, summaries).
#pragma once
#include <functional>

#include "core/spec/proposer.h"

namespace inferscope {

class NgramProposer final : public Proposer {
 public:
  // Throws std::invalid_argument unless 1 <= ngram_min <= ngram_max <= 16. `ends_generation`: whether
  // a token ends generation (the vocabulary's is_eog); none: no token does.
  NgramProposer(int32_t ngram_min, int32_t ngram_max, std::function<bool(TokenId)> ends_generation = {});
  std::string_view name() const override { return "ngram"; }
  void propose(std::span<const DraftRequest> requests, const ProposeContext& context,
               std::vector<Draft>& drafts) override;

  // The draft for one sequence: at most max_tokens tokens.
  std::vector<TokenId> lookup(std::span<const TokenId> history, int32_t max_tokens) const;

  // How far back a match is measured at most (tokens).
  static constexpr int64_t kLongestMatch = 64;

 private:
  int32_t ngram_min_, ngram_max_;
  std::function<bool(TokenId)> ends_generation_;
};

}  // namespace inferscope
