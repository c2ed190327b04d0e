#include "core/spec/draft_length.h"

#include <algorithm>
#include <cmath>

namespace inferscope {

double expected_tokens_per_verify(double a, int32_t k) {
  if (a >= 1.0) return k + 1.0;
  return (1.0 - std::pow(a, k + 1)) / (1.0 - a);
}

void StepCostCurve::observe(int32_t tokens, double seconds) {
  if (tokens < 1 || !(seconds > 0)) return;
  if (samples_.size() <= static_cast<size_t>(tokens)) samples_.resize(static_cast<size_t>(tokens) + 1);
  std::deque<double>& s = samples_[static_cast<size_t>(tokens)];
  s.push_front(seconds);
  if (s.size() > kSamples) s.pop_back();
}

double StepCostCurve::median(int32_t tokens) const {
  std::vector<double> s(samples_[static_cast<size_t>(tokens)].begin(), samples_[static_cast<size_t>(tokens)].end());
  const auto mid = s.begin() + static_cast<ptrdiff_t>(s.size() / 2);
  std::nth_element(s.begin(), mid, s.end());
  if (s.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(s.begin(), mid)) / 2;
}

std::optional<double> StepCostCurve::seconds(int32_t tokens) const {
  const auto measured = [&](int32_t t) { return static_cast<size_t>(t) < samples_.size() && !samples_[static_cast<size_t>(t)].empty(); };
  int32_t lo = std::min(tokens, static_cast<int32_t>(samples_.size()) - 1);
  while (lo >= 1 && !measured(lo)) --lo;
  if (lo < 1) return std::nullopt;
  if (lo == tokens) return median(lo);
  int32_t hi = tokens;
  while (hi < static_cast<int32_t>(samples_.size()) && !measured(hi)) ++hi;
  if (hi >= static_cast<int32_t>(samples_.size())) return median(lo);
  // Between two measured counts: on the straight line through them.
  const double f = static_cast<double>(tokens - lo) / static_cast<double>(hi - lo);
  return median(lo) + f * (median(hi) - median(lo));
}

int32_t StepCostCurve::largest_measured() const {
  for (int32_t t = static_cast<int32_t>(samples_.size()) - 1; t >= 1; --t) {
    if (!samples_[static_cast<size_t>(t)].empty()) return t;
  }
  return 0;
}

void AcceptanceEstimate::observe(int32_t drafted, int32_t accepted) {
  if (drafted <= 0) return;
  const auto judged = static_cast<size_t>(std::min({drafted, accepted + 1, kPositions}));
  if (accepted_.size() < judged) accepted_.resize(judged, 0), rejected_.resize(judged, 0);
  for (size_t i = 0; i < judged; ++i) {
    accepted_[i] = accepted_[i] * kDecay + (static_cast<int32_t>(i) < accepted ? 1 : 0);
    rejected_[i] = rejected_[i] * kDecay + (static_cast<int32_t>(i) < accepted ? 0 : 1);
  }
}

double AcceptanceEstimate::alpha_at(size_t i, double before) const {
  if (i == 0) return accepted_[0] / (accepted_[0] + rejected_[0]);
  if (i >= accepted_.size()) return before;  // never judged: as the position before it
  return (accepted_[i] + kPriorWeight * before) / (accepted_[i] + rejected_[i] + kPriorWeight);
}

double AcceptanceEstimate::alpha(int32_t position) const {
  double a = 0;
  for (size_t i = 0; i <= static_cast<size_t>(position); ++i) a = alpha_at(i, a);
  return a;
}

std::vector<double> AcceptanceEstimate::expected_tokens(int32_t k) const {
  std::vector<double> tokens(1, 1.0);
  double a = 0, reach = 1;  // reach: the chance that the verify gets past every draft so far
  for (size_t i = 0; i < static_cast<size_t>(k); ++i) {
    a = alpha_at(i, a);
    reach *= a;
    tokens.push_back(tokens.back() + reach);
  }
  return tokens;
}

DraftLengthPolicy::DraftLengthPolicy(int32_t max_k, bool free_shadows) : max_k_(max_k), free_shadows_(free_shadows) {}

std::vector<int32_t> DraftLengthPolicy::choose(std::span<const RequestId> speculating, int32_t decodes) {
  std::vector<int32_t> chosen(speculating.size(), 0);
  int32_t tokens = decodes;         // the step's tokens so far: every decode's, and the drafts chosen
  double emitted = decodes;         // the tokens it is expected to emit
  for (size_t i = 0; i < speculating.size(); ++i) {
    Sequence& seq = sequences_[speculating[i]];
    const std::optional<double> base = curve_.seconds(tokens);
    if (!base) continue;  // nothing measured yet: the first steps time plain decoding
    // Drafts reach at most one token past the longest step measured.
    const int32_t reach = std::min(max_k_, curve_.largest_measured() + 1 - tokens);
    const std::vector<double> expected = seq.acceptance.expected_tokens(std::max(reach, 1));
    const double plain = emitted / *base;
    int32_t k = 0;
    double best = plain;
    for (int32_t d = 1; d <= reach; ++d) {
      const double rate = (emitted + expected[static_cast<size_t>(d)] - 1) / *curve_.seconds(tokens + d);
      if (rate > best) best = rate, k = d;
    }
    if (best < plain * (1 + kMargin)) k = 0;
    // A proposer without free shadows is measured again by a one-token draft now and then.
    if (k == 0 && !free_shadows_ && reach >= 1 && ++seq.undrafted >= kProbeInterval) k = 1;
    if (k > 0) seq.undrafted = 0;
    chosen[i] = k;
    tokens += k;
    emitted += expected[static_cast<size_t>(k)] - 1;
  }
  return chosen;
}

void DraftLengthPolicy::on_verified(RequestId id, int32_t drafted, int32_t accepted) {
  sequences_[id].acceptance.observe(drafted, accepted);
}

void DraftLengthPolicy::on_shadow(RequestId id, bool matched) {
  sequences_[id].acceptance.observe(1, matched ? 1 : 0);
}

void DraftLengthPolicy::on_decode_step(int32_t tokens, double seconds) { curve_.observe(tokens, seconds); }

void DraftLengthPolicy::forget(RequestId id) { sequences_.erase(id); }

double DraftLengthPolicy::alpha(RequestId id) const {
  const auto it = sequences_.find(id);
  return it == sequences_.end() ? AcceptanceEstimate{}.alpha() : it->second.acceptance.alpha();
}

}  // namespace inferscope
