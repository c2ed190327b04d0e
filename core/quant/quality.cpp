#include "core/quant/quality.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/sample/logprobs.h"
#include "core/sample/sampler.h"

namespace inferscope {
const char* perplexity_method_name(PerplexityMethod method) {
  return method == PerplexityMethod::AllTokens ? "all-tokens" : "llamacpp";
}

std::optional<PerplexityMethod> perplexity_method_from_name(std::string_view name) {
  if (name == "all-tokens") return PerplexityMethod::AllTokens;
  if (name == "llamacpp") return PerplexityMethod::LlamaCpp;
  return std::nullopt;
}

int64_t perplexity_min_ctx(PerplexityMethod method) { return method == PerplexityMethod::LlamaCpp ? 4 : 2; }

int64_t perplexity_min_tokens(PerplexityMethod method, int64_t ctx) {
  return method == PerplexityMethod::LlamaCpp ? ctx : 2;
}

std::vector<TokenWindow> perplexity_windows(int64_t n_tokens, int64_t ctx, PerplexityMethod method, bool uses_bos) {
  if (ctx < perplexity_min_ctx(method)) {
    throw std::invalid_argument(std::string("perplexity: a ") +
                                (method == PerplexityMethod::LlamaCpp ? "llamacpp chunk" : "window") + " needs at least " +
                                std::to_string(perplexity_min_ctx(method)) + " tokens, not " + std::to_string(ctx));
  }
  std::vector<TokenWindow> windows;
  if (method == PerplexityMethod::LlamaCpp) {
    for (int64_t begin = 0; begin + ctx <= n_tokens; begin += ctx) windows.push_back({begin, begin + ctx, ctx / 2, uses_bos});
    return windows;
  }
  for (int64_t begin = 0; begin + 1 < n_tokens; begin += ctx - 1) {
    windows.push_back(TokenWindow{begin, std::min(n_tokens, begin + ctx)});
  }
  return windows;
}

double kl_divergence(std::span<const float> p_logits, std::span<const float> q_logits) {
  if (p_logits.size() != q_logits.size() || p_logits.empty()) {
    throw std::invalid_argument("kl_divergence: the distributions have " + std::to_string(p_logits.size()) + " and " +
                                std::to_string(q_logits.size()) + " entries");
  }
  const double p_norm = log_sum_exp(p_logits), q_norm = log_sum_exp(q_logits);
  double kl = 0;
  for (size_t i = 0; i < p_logits.size(); ++i) {
    const double log_p = p_logits[i] - p_norm, log_q = q_logits[i] - q_norm;
    kl += std::exp(log_p) * (log_p - log_q);
  }
  return std::max(kl, 0.0);  // never negative; rounding can leave a tiny negative sum
}

void PerplexityAccumulator::add(std::span<const float> logits, TokenId next) {
  nll_sum_ -= log_probability(logits, next);
  ++tokens_;
}

double PerplexityAccumulator::perplexity() const {
  return tokens_ > 0 ? std::exp(nll_sum_ / static_cast<double>(tokens_)) : std::numeric_limits<double>::quiet_NaN();
}

void DivergenceAccumulator::add(std::span<const float> reference_logits, std::span<const float> logits) {
  kl_sum_ += kl_divergence(reference_logits, logits);
  agree_ += argmax(reference_logits) == argmax(logits) ? 1 : 0;
  ++positions_;
}

double DivergenceAccumulator::mean_kl() const {
  return positions_ > 0 ? kl_sum_ / static_cast<double>(positions_) : std::numeric_limits<double>::quiet_NaN();
}

double DivergenceAccumulator::top1_agreement() const {
  return positions_ > 0 ? static_cast<double>(agree_) / static_cast<double>(positions_)
                        : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace inferscope
