// Prompt lookup / n-gram speculation (no model): the sequence's last tokens are looked up earlier in
// the same sequence (prompt and output), and the tokens that followed are proposed. Each earlier place
// is compared over at most ngram_max tokens; the one matching the most (at least ngram_min) wins, the
// most recent among equals, so the source being copied beats a shorter coincidence. A draft is no
// longer than its match (a two-token coincidence earns two tokens, a long copy more), and it stops
// after an end-of-generation token (the end of a copied span: nothing after it can be kept). q is
// one-hot. Cheap and strong where the output copies its input (code edits, quoting, summaries).
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
  bool drafts_cost_nothing() const override { return true; }
  void propose(std::span<const DraftRequest> requests, const ProposeContext& context,
               std::vector<Draft>& drafts) override;

  // The draft for one sequence: at most max_tokens tokens.
  std::vector<TokenId> lookup(std::span<const TokenId> history, int32_t max_tokens) const;

 private:
  int32_t ngram_min_, ngram_max_;
  std::function<bool(TokenId)> ends_generation_;
};

}  // namespace inferscope
