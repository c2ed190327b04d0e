#include "core/spec/ngram_proposer.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace inferscope {

NgramProposer::NgramProposer(int32_t ngram_min, int32_t ngram_max, std::function<bool(TokenId)> ends_generation)
    : ngram_min_(ngram_min), ngram_max_(ngram_max), ends_generation_(std::move(ends_generation)) {
  if (ngram_min < 1 || ngram_max > 16 || ngram_min > ngram_max) {
    throw std::invalid_argument("ngram proposer: need 1 <= ngram-min <= ngram-max <= 16, got " +
                                std::to_string(ngram_min) + " and " + std::to_string(ngram_max));
  }
}

std::vector<TokenId> NgramProposer::lookup(std::span<const TokenId> history, int32_t max_tokens) const {
  const int64_t len = static_cast<int64_t>(history.size());
  // How many tokens before `end` (exclusive) equal the sequence's last ones, up to ngram_max.
  const auto match_before = [&](int64_t end) {
    int64_t m = 0;
    while (m < ngram_max_ && m < end && history[static_cast<size_t>(end - 1 - m)] == history[static_cast<size_t>(len - 1 - m)]) ++m;
    return m;
  };
  // Earlier places, latest first, each with a token after it: the longest match of at least
  // ngram_min tokens, the latest among equals.
  int64_t best_end = -1, best_match = ngram_min_ - 1;
  for (int64_t end = len - 1; end >= 1 && best_match < ngram_max_; --end) {
    const int64_t m = match_before(end);
    if (m > best_match) best_end = end, best_match = m;
  }
  if (best_end < 0) return {};
  // As far as the match vouches for, and no further than an end of generation.
  const int64_t take = std::min({static_cast<int64_t>(max_tokens), len - best_end, best_match});
  std::vector<TokenId> draft;
  for (int64_t i = 0; i < take; ++i) {
    const TokenId t = history[static_cast<size_t>(best_end + i)];
    draft.push_back(t);
    if (ends_generation_ && ends_generation_(t)) break;
  }
  return draft;
}

void NgramProposer::propose(std::span<const DraftRequest> requests, const ProposeContext& /*context*/,
                            std::vector<Draft>& drafts) {
  drafts.clear();
  for (const DraftRequest& r : requests) drafts.push_back(Draft{lookup(r.history, r.max_tokens), {}});
}

}  // namespace inferscope
