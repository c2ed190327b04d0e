#include "core/spec/ngram_proposer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace inferscope {

NgramProposer::NgramProposer(int32_t ngram_min, int32_t ngram_max) : ngram_min_(ngram_min), ngram_max_(ngram_max) {
  if (ngram_min < 1 || ngram_max > 16 || ngram_min > ngram_max) {
    throw std::invalid_argument("ngram proposer: need 1 <= ngram-min <= ngram-max <= 16, got " +
                                std::to_string(ngram_min) + " and " + std::to_string(ngram_max));
  }
}

std::vector<TokenId> NgramProposer::lookup(std::span<const TokenId> history, int32_t max_tokens) const {
  const int64_t len = static_cast<int64_t>(history.size());
  for (int64_t n = std::min<int64_t>(ngram_max_, len - 1); n >= ngram_min_; --n) {
    const auto suffix = history.last(static_cast<size_t>(n));
    // The most recent earlier occurrence: it ends at `end` (exclusive) before the suffix's own start,
    // so at least one token follows it.
    for (int64_t end = len - 1; end >= n; --end) {
      if (!std::equal(suffix.begin(), suffix.end(), history.begin() + (end - n))) continue;
      const int64_t take = std::min<int64_t>(max_tokens, len - end);
      return {history.begin() + end, history.begin() + end + take};
    }
  }
  return {};
}

void NgramProposer::propose(std::span<const DraftRequest> requests, const ProposeContext& /*context*/,
                            std::vector<Draft>& drafts) {
  drafts.clear();
  for (const DraftRequest& r : requests) drafts.push_back(Draft{lookup(r.history, r.max_tokens), {}});
}

}  // namespace inferscope
