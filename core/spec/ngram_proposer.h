// Prompt lookup / n-gram speculation (no model): the longest suffix of the sequence, n tokens for n
// from ngram_max down to ngram_min, is looked up earlier in the same sequence (prompt and output),
// and the tokens that followed its most recent earlier occurrence are proposed. q is one-hot.
// Cheap and strong where the output copies its input (code edits, quoting, summaries).
#pragma once
#include "core/spec/proposer.h"

namespace inferscope {

class NgramProposer final : public Proposer {
 public:
  // Throws std::invalid_argument unless 1 <= ngram_min <= ngram_max <= 16.
  NgramProposer(int32_t ngram_min, int32_t ngram_max);
  std::string_view name() const override { return "ngram"; }
  void propose(std::span<const DraftRequest> requests, const ProposeContext& context,
               std::vector<Draft>& drafts) override;

  // The draft for one sequence: at most max_tokens tokens.
  std::vector<TokenId> lookup(std::span<const TokenId> history, int32_t max_tokens) const;

 private:
  int32_t ngram_min_, ngram_max_;
};

}  // namespace inferscope
