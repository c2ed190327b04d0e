// Speculative verification: keep the drafts the target accepts, then add its own correction or bonus.
#include "core/spec/verifier.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace inferscope {

namespace {

// p(id) in a sparse distribution, 0 when the chain dropped the token.
float prob_of(const TokenProbs& probs, TokenId id) {
  for (const auto& [t, p] : probs)
    if (t == id) return p;
  return 0.0f;
}

// The correction after draft i was refused: a draw from norm(max(0, p - q)).
TokenId draw_residual(const TokenProbs& p, const Draft& draft, size_t i, size_t vocab, Sampler& sampler) {
  // p - q, dense over the vocabulary: covers both supports, and tokens only q has go negative and drop out.
  std::vector<double> diff(vocab, 0.0);
  for (const auto& [id, pt] : p) diff[static_cast<size_t>(id)] += pt;
  if (draft.q.empty()) {
    diff[static_cast<size_t>(draft.tokens[i])] -= 1.0;
  } else {
    for (const auto& [id, qt] : draft.q[i])
      if (id >= 0 && static_cast<size_t>(id) < vocab) diff[static_cast<size_t>(id)] -= qt;
  }
  TokenProbs residual;
  double mass = 0.0;
  for (size_t id = 0; id < vocab; ++id) {
    if (diff[id] <= 0.0) continue;
    residual.emplace_back(static_cast<TokenId>(id), static_cast<float>(diff[id]));
    mass += diff[id];
  }
  // A refusal means q outweighs p somewhere, so p outweighs q elsewhere; zero mass only by rounding.
  if (mass <= 0.0) return Sampler::draw(p, sampler.uniform());
  for (auto& c : residual) c.second = static_cast<float>(c.second / mass);
  return Sampler::draw(residual, sampler.uniform());
}

}  // namespace

float Draft::q_of(size_t i) const {
  if (q.empty()) return 1.0f;
  return prob_of(q[i], tokens[i]);
}

const char* token_origin_name(TokenOrigin origin) {
  switch (origin) {
    case TokenOrigin::Plain: return "plain";
    case TokenOrigin::Accepted: return "accepted";
    case TokenOrigin::Corrected: return "corrected";
    case TokenOrigin::Bonus: return "bonus";
  }
  return "unknown";
}

Verification verify_draft(std::span<const float> rows, size_t vocab, const Draft& draft, Sampler& sampler,
                          std::span<const TokenId> history) {
  const size_t n = draft.tokens.size();
  if (vocab == 0 || rows.size() != (n + 1) * vocab)
    throw std::invalid_argument("verify: " + std::to_string(rows.size()) + " logits for " + std::to_string(n) +
                                " drafts over a vocabulary of " + std::to_string(vocab) +
                                " (want (drafts + 1) * vocab)");
  if (!draft.q.empty() && draft.q.size() != n)
    throw std::invalid_argument("verify: " + std::to_string(draft.q.size()) + " draft distributions for " +
                                std::to_string(n) + " draft tokens");
  for (TokenId t : draft.tokens)
    if (t < 0 || static_cast<size_t>(t) >= vocab)
      throw std::invalid_argument("verify: draft token " + std::to_string(t) + " outside the vocabulary of " +
                                  std::to_string(vocab));

  // History then drafts: row i sees the first history.size() + i of them, so the penalty counts accepted drafts.
  std::vector<TokenId> ctx(history.begin(), history.end());
  ctx.insert(ctx.end(), draft.tokens.begin(), draft.tokens.end());
  const std::span<const TokenId> context(ctx);

  Verification v;
  const bool greedy = sampler.greedy();
  for (size_t i = 0; i <= n; ++i) {
    const TokenProbs& p = sampler.distribution(rows.subspan(i * vocab, vocab), context.first(history.size() + i));
    if (i == n) {
      // Every draft passed: the target's own token after them, from the last row.
      const TokenId bonus = greedy ? p.front().first : Sampler::draw(p, sampler.uniform());
      v.emitted.push_back({bonus, TokenOrigin::Bonus, prob_of(p, bonus), 0.0f});
      break;
    }
    const TokenId x = draft.tokens[i];
    const float px = prob_of(p, x);
    const float qx = draft.q_of(i);
    // Greedy p is one-hot, so px > 0 iff x is the target's choice; sampling: u < min(1, px / qx), qx = 0 included.
    if (greedy ? px > 0.0f : sampler.uniform() * qx < px) {
      v.emitted.push_back({x, TokenOrigin::Accepted, px, qx});
      ++v.accepted;
      continue;
    }
    v.rejected = true;
    v.refused = {x, TokenOrigin::Plain, px, greedy ? 1.0f : qx};
    const TokenId fix = greedy ? p.front().first : draw_residual(p, draft, i, vocab, sampler);
    v.emitted.push_back({fix, TokenOrigin::Corrected, prob_of(p, fix), 0.0f});
    break;
  }
  return v;
}

}  // namespace inferscope
