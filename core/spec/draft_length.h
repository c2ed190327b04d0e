// Speculation that never loses: each step, every speculating sequence drafts only as many tokens as
// are expected to pay, from what was measured on this engine. With acceptance α_i at draft position
// i, a verify of k drafts emits E(k) = 1 + α_0 + α_0 α_1 + … + α_0 ⋯ α_(k-1) tokens on average (a
// first draft token is accepted more often than a fourth); a decode-only step of t tokens costs
// the step-cost curve's seconds(t). A step's B decodes emit B tokens in seconds(B); a sequence's k
// drafts add E(k) − 1 tokens and make it seconds(B + k). A sequence drafts the k that emits the most
// tokens per second, and nothing unless that beats no draft by kMargin.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/common/request_id.h"

namespace inferscope {

// Tokens per verify when each of k drafts is accepted with the same probability a, given the ones
// before it (Leviathan et al.): 1 + a + … + a^k = (1 − a^(k+1)) / (1 − a). The sweep's prediction
// from a measured acceptance rate.
double expected_tokens_per_verify(double a, int32_t k);

// Decode-only steps' wall seconds by their token count (one per decode, plus the drafts scored):
// the median of the last kSamples steps of each count. A count not measured yet is interpolated
// between its measured neighbours; past the largest measured count a step is taken to cost what the
// largest does, so longer drafts are tried one token further at a time.
class StepCostCurve {
 public:
  static constexpr size_t kSamples = 8;
  void observe(int32_t tokens, double seconds);
  // nullopt while no count up to `tokens` has been measured.
  std::optional<double> seconds(int32_t tokens) const;
  int32_t largest_measured() const;  // 0 before any step

 private:
  double median(int32_t tokens) const;
  std::vector<std::deque<double>> samples_;  // [token count]: the latest first
};

// One sequence's acceptance by draft position: α_i, the chance that draft token i is accepted when
// every one before it was. A verify of d drafts with a accepted judges positions 0..min(a, d - 1)
// (nothing after its first rejection); each position's older verdicts weigh kDecay per verdict less.
// Position 0 starts from one acceptance and two rejections (1/3: a match is taken for a coincidence
// until drafts show otherwise, so one lucky draft does not start a run; that prior fades as verdicts
// come). A later position starts from the one before it, worth kPriorWeight verdicts: copied text
// keeps being copied, and a position not yet drafted is never taken for worse than the last one seen.
class AcceptanceEstimate {
 public:
  static constexpr double kDecay = 0.9, kPriorWeight = 1;
  static constexpr int32_t kPositions = 16;
  void observe(int32_t drafted, int32_t accepted);
  double alpha(int32_t position = 0) const;
  // E(0) .. E(k): the tokens a verify of d drafts emits on average, 1 + α_0 + α_0 α_1 + … + α_0 ⋯ α_(d-1).
  std::vector<double> expected_tokens(int32_t k) const;

 private:
  // α_i from position i's verdicts and α_(i-1) (`before`; unused at position 0).
  double alpha_at(size_t i, double before) const;

  std::vector<double> accepted_{1}, rejected_{2};  // decayed verdicts by position
};

class DraftLengthPolicy {
 public:
  // A chosen draft must beat no draft by this share of tokens per second.
  static constexpr double kMargin = 0.05;
  // A sequence that drafts nothing for this many decodes drafts one token, to measure its acceptance
  // again (a proposer whose drafts cost a forward pass; a free one is measured by its shadow drafts).
  static constexpr int32_t kProbeInterval = 32;

  // `max_k`: the most drafts per sequence; `free_shadows`: the proposer's drafts cost nothing, so a
  // sequence that drafts nothing is still measured by comparing its would-be draft with its token.
  DraftLengthPolicy(int32_t max_k, bool free_shadows);

  // The most drafts each of the next step's speculating decodes scores (in order; 0: none), for a
  // step of `decodes` decodes in all.
  std::vector<int32_t> choose(std::span<const RequestId> speculating, int32_t decodes);
  // A verify of `id`: `drafted` tokens scored, `accepted` kept.
  void on_verified(RequestId id, int32_t drafted, int32_t accepted);
  // A shadow draft of `id` (not scored): whether its first token was the token the step emitted.
  void on_shadow(RequestId id, bool matched);
  // A step without prefill: `tokens` computed (decodes and drafts) in `seconds`.
  void on_decode_step(int32_t tokens, double seconds);
  void forget(RequestId id);

  double alpha(RequestId id) const;
  const StepCostCurve& curve() const { return curve_; }

 private:
  struct Sequence {
    AcceptanceEstimate acceptance;
    int32_t undrafted = 0;  // decodes in a row without a draft
  };
  int32_t max_k_;
  bool free_shadows_;
  StepCostCurve curve_;
  std::unordered_map<RequestId, Sequence> sequences_;
};

}  // namespace inferscope
