// The sampler chain: repetition penalty -> temperature -> top-k -> top-p -> min-p -> seeded draw.
#include "core/sample/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace inferscope {

namespace {

using Candidate = std::pair<int32_t, float>;  // (token id, logit or probability)

// Candidate order: larger value first, lower id on ties (so top-k 1 is exactly argmax).
bool before(const Candidate& a, const Candidate& b) {
  return a.second > b.second || (a.second == b.second && a.first < b.first);
}

// llama.cpp's rule, once per distinct token among the last `last_n` of history (last_n < 0: all of it).
void apply_repetition_penalty(std::vector<Candidate>& cands, std::span<const int32_t> history, float penalty,
                              int32_t last_n) {
  if (penalty == 1.0f || last_n == 0 || history.empty()) return;
  const size_t n = last_n < 0 ? history.size() : std::min(history.size(), static_cast<size_t>(last_n));
  std::vector<int32_t> seen(history.end() - static_cast<std::ptrdiff_t>(n), history.end());
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  for (int32_t id : seen) {
    if (id < 0 || id >= static_cast<int32_t>(cands.size())) continue;  // not in this vocabulary
    float& logit = cands[static_cast<size_t>(id)].second;
    logit = logit > 0.0f ? logit / penalty : logit * penalty;
  }
}

// Scales by 1/T and drops tokens that can never be drawn (-inf). If some logit overflowed to
// +inf, those tokens share all the probability: they become 0 and every finite one is dropped.
void scale_and_drop_impossible(std::vector<Candidate>& cands, float temperature) {
  bool any_pos_inf = false;
  for (auto& c : cands) {
    c.second /= temperature;
    any_pos_inf = any_pos_inf || c.second == std::numeric_limits<float>::infinity();
  }
  if (any_pos_inf) {
    std::erase_if(cands, [](const Candidate& c) { return c.second != std::numeric_limits<float>::infinity(); });
    for (auto& c : cands) c.second = 0.0f;
    return;
  }
  std::erase_if(cands, [](const Candidate& c) { return c.second == -std::numeric_limits<float>::infinity(); });
}

// Keeps the k best candidates, sorted best first. One pass with a heap of the k best so far (its
// front is the worst of them): most tokens are rejected by a single comparison.
void keep_top_k(std::vector<Candidate>& cands, size_t k) {
  if (k >= cands.size()) return;
  const auto heap_end = cands.begin() + static_cast<std::ptrdiff_t>(k);
  std::make_heap(cands.begin(), heap_end, before);
  for (auto it = heap_end; it != cands.end(); ++it) {
    if (!before(*it, cands.front())) continue;
    std::pop_heap(cands.begin(), heap_end, before);
    *(heap_end - 1) = *it;
    std::push_heap(cands.begin(), heap_end, before);
  }
  cands.resize(k);
  std::sort(cands.begin(), cands.end(), before);
}

// Logits -> probabilities summing to 1 (max-subtracted, so large logits cannot overflow).
void softmax(std::vector<Candidate>& cands) {
  float max_logit = -std::numeric_limits<float>::infinity();
  for (const auto& c : cands) max_logit = std::max(max_logit, c.second);
  double sum = 0.0;
  for (auto& c : cands) {
    c.second = std::exp(c.second - max_logit);
    sum += c.second;
  }
  for (auto& c : cands) c.second = static_cast<float>(c.second / sum);
}

void renormalize(std::vector<Candidate>& cands) {
  double sum = 0.0;
  for (const auto& c : cands) sum += c.second;
  for (auto& c : cands) c.second = static_cast<float>(c.second / sum);
}

// Nucleus: the smallest best-first prefix whose probability reaches top_p (at least one token).
// Rather than sorting the whole vocabulary, moves tokens with p >= threshold to the front, lowering
// the threshold until they hold top_p of the mass; the nucleus lies among them, so only they are sorted.
void keep_top_p(std::vector<Candidate>& cands, float top_p) {
  if (top_p >= 1.0f) return;
  float p_max = 0.0f;
  for (const auto& c : cands) p_max = std::max(p_max, c.second);
  auto front_end = cands.begin();
  double front_mass = 0.0;
  for (float threshold = p_max / 16.0f; front_mass < top_p && front_end != cands.end(); threshold /= 16.0f) {
    const auto next =
        std::partition(front_end, cands.end(), [=](const Candidate& c) { return c.second >= threshold; });
    for (auto it = front_end; it != next; ++it) front_mass += it->second;
    front_end = next;
  }
  std::sort(cands.begin(), front_end, before);
  double cumulative = 0.0;
  for (auto it = cands.begin(); it != front_end; ++it) {
    cumulative += it->second;
    if (cumulative >= top_p) {
      cands.erase(it + 1, cands.end());
      return renormalize(cands);
    }
  }
  cands.erase(front_end, cands.end());  // rounding left the sum just under top_p: keep the whole front
  renormalize(cands);
}

// Keeps tokens whose probability is at least min_p times the largest one.
void keep_min_p(std::vector<Candidate>& cands, float min_p) {
  if (min_p <= 0.0f) return;
  float p_max = 0.0f;
  for (const auto& c : cands) p_max = std::max(p_max, c.second);
  const float threshold = min_p * p_max;
  std::erase_if(cands, [threshold](const Candidate& c) { return c.second < threshold; });
  renormalize(cands);
}

// A uniform double in [0, 1) from the top 53 bits: identical on every standard library.
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

void validate_sampling(const SamplingParams& p) {
  if (!std::isfinite(p.temperature)) throw std::invalid_argument("sampler: temperature must be finite");
  if (p.top_k < 0) throw std::invalid_argument("sampler: top_k must be >= 0, got " + std::to_string(p.top_k));
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f))
    throw std::invalid_argument("sampler: top_p must be in (0, 1], got " + std::to_string(p.top_p));
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f))
    throw std::invalid_argument("sampler: min_p must be in [0, 1], got " + std::to_string(p.min_p));
  if (!(p.repeat_penalty > 0.0f))
    throw std::invalid_argument("sampler: repeat_penalty must be > 0, got " + std::to_string(p.repeat_penalty));
}

int32_t argmax(std::span<const float> logits) {
  if (logits.empty()) throw std::invalid_argument("argmax: empty logits");
  size_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i)
    if (logits[i] > logits[best] || std::isnan(logits[best])) best = i;
  return static_cast<int32_t>(best);
}

Sampler::Sampler(const SamplingParams& params) : params_(params), rng_(params.seed) { validate_sampling(params_); }

int32_t Sampler::draw(const TokenProbs& probs, double u) {
  if (probs.empty()) throw std::invalid_argument("sampler: draw from an empty distribution");
  double cumulative = 0.0;
  for (const auto& c : probs) {
    cumulative += c.second;
    if (u < cumulative) return c.first;
  }
  return probs.back().first;  // u fell in the rounding gap above the final cumulative sum
}

double Sampler::uniform() { return uniform01(rng_); }

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
  const TokenProbs& probs = distribution(logits, history);
  return greedy() ? probs.front().first : draw(probs, uniform());
}

const TokenProbs& Sampler::distribution(std::span<const float> logits, std::span<const int32_t> history) {
  if (logits.empty()) throw std::invalid_argument("sampler: empty logits");
  candidates_.resize(logits.size());
  // A NaN logit can never be chosen: it becomes -inf.
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < logits.size(); ++i)
    candidates_[i] = {static_cast<int32_t>(i), std::isnan(logits[i]) ? kNegInf : logits[i]};
  // A row of NaN and -inf (a broken forward pass) has nothing to draw: fail rather than emit token 0.
  if (std::none_of(candidates_.begin(), candidates_.end(), [](const Candidate& c) { return c.second > kNegInf; }))
    throw std::runtime_error("sampling: no finite logit among the " + std::to_string(logits.size()) +
                             " candidates (all NaN or -inf)");
  apply_repetition_penalty(candidates_, history, params_.repeat_penalty, params_.repeat_last_n);

  // Greedy: the best penalized logit, no randomness consumed.
  if (greedy()) {
    const auto best = std::min_element(candidates_.begin(), candidates_.end(), before);
    candidates_ = {{best->first, 1.0f}};
    return candidates_;
  }

  scale_and_drop_impossible(candidates_, params_.temperature);
  // Finite logits can still overflow to -inf under a huge penalty or a tiny temperature.
  if (candidates_.empty())
    throw std::runtime_error("sampling: the temperature (or repetition penalty) scaled every logit to -inf");
  if (params_.top_k > 0) keep_top_k(candidates_, static_cast<size_t>(params_.top_k));
  softmax(candidates_);
  keep_top_p(candidates_, params_.top_p);
  keep_min_p(candidates_, params_.min_p);
  return candidates_;
}

}  // namespace inferscope
