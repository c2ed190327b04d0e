// Speculative verification (Leviathan et al. 2023, Chen et al. 2023): the target model has scored
// the last accepted token and k draft tokens in one forward pass, giving k + 1 rows of logits; the
// verifier keeps the longest acceptable prefix of the drafts and adds one token of its own (a
// correction at the first rejection, or a bonus token when every draft passed). The emitted tokens
// follow exactly the distribution the target alone would sample from:
//  - greedy: a draft is accepted while it equals the target's choice; the first mismatch emits the
//    target's choice instead;
//  - sampling: draft x is accepted with probability min(1, p(x) / q(x)); at the first rejection the
//    token is drawn from norm(max(0, p - q)); the bonus token is drawn from p.
// p is the request's own sampling chain (penalty over the tokens accepted so far, temperature,
// top-k, top-p, min-p) applied to each row, and every draw comes from the request's seeded sampler,
// so a seeded run repeats exactly.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "core/sample/sampler.h"
#include "core/tokenizer/vocab.h"

namespace inferscope {

// What a proposer drafted for one sequence: the tokens, and for each the distribution q it was drawn
// from (empty: one-hot at the token, as the n-gram proposer and greedy drafts give).
struct Draft {
  std::vector<TokenId> tokens;
  std::vector<TokenProbs> q;  // empty, or one entry per token

  // q(token i): 1 for a one-hot draft, 0 when token i is missing from its own distribution.
  float q_of(size_t i) const;
};

// How an emitted token came about (the chat's per-token view colours them this way).
enum class TokenOrigin : uint8_t { Plain, Accepted, Corrected, Bonus };
const char* token_origin_name(TokenOrigin origin);

struct EmittedToken {
  TokenId id = 0;
  TokenOrigin origin = TokenOrigin::Plain;
  float p = 0;  // the target's probability of the token under the request's chain
  float q = 0;  // the draft's probability of it (accepted drafts; 0 otherwise)
};

struct Verification {
  std::vector<EmittedToken> emitted;  // the accepted drafts, then one corrected or bonus token
  int32_t accepted = 0;               // drafts kept (emitted.size() - 1)
  // The first refused draft with the target's and the draft's probability of it (rejected is false
  // when every draft passed). Drafts after it were never judged.
  bool rejected = false;
  EmittedToken refused;
};

// rows: (draft.tokens.size() + 1) rows of `vocab` logits; row i scores the token after
// history + draft.tokens[0..i). `history` is the sequence before the drafts (prompt + output so far).
// Throws std::runtime_error as Sampler::distribution does for a row with no finite logit, and
// std::invalid_argument for rows, distributions or draft tokens that do not fit the draft and vocabulary.
Verification verify_draft(std::span<const float> rows, size_t vocab, const Draft& draft, Sampler& sampler,
                          std::span<const TokenId> history);

}  // namespace inferscope
