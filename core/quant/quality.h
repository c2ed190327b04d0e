// Measuring what a quantization level costs in quality: token-level perplexity of a text, and how
// far one level's next-token distributions drift from a reference level's on the same tokens.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/sample/logprobs.h"
#include "core/tokenizer/vocab.h"

namespace inferscope {

// A run of tokens [begin, end) that goes through the model on a fresh KV cache; the logits at
// positions first_scored .. end - begin - 2 of it each score the window's next token.
struct TokenWindow {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t first_scored = 0;
  bool bos_first = false;  // the window's first token is replaced by BOS (llama-perplexity's chunks)
};

// How a text is cut into windows and which positions are scored.
enum class PerplexityMethod {
  // Windows of at most ctx tokens, each starting on the previous one's last token (window k starts at
  // k * (ctx - 1)); every position but a window's last is scored, so every token after the text's
  // first is scored exactly once.
  AllTokens,
  // llama-perplexity's: floor(n / ctx) chunks of ctx tokens, the rest dropped; with a BOS vocabulary
  // each chunk's first token is replaced by BOS; positions ctx/2 .. ctx - 2 are scored (each token
  // with at least half a window of context).
  LlamaCpp,
};

// "all-tokens" or "llamacpp", and back (nullopt for another name).
const char* perplexity_method_name(PerplexityMethod method);
std::optional<PerplexityMethod> perplexity_method_from_name(std::string_view name);

// The shortest window `method` takes (2 tokens, or 4 for LlamaCpp: half a chunk as context and at
// least one scored position), and the fewest tokens that give it a window of ctx.
int64_t perplexity_min_ctx(PerplexityMethod method);
int64_t perplexity_min_tokens(PerplexityMethod method, int64_t ctx);

// The windows of `method` over n tokens. Empty when nothing can be scored (n < 2, or n < ctx for
// LlamaCpp). Throws std::invalid_argument for ctx < 2 (AllTokens) or ctx < 4 (LlamaCpp).
std::vector<TokenWindow> perplexity_windows(int64_t n_tokens, int64_t ctx,
                                            PerplexityMethod method = PerplexityMethod::AllTokens, bool uses_bos = false);

// KL(P || Q) = sum_i p_i (ln p_i - ln q_i) in nats, P = softmax(p_logits), Q = softmax(q_logits).
double kl_divergence(std::span<const float> p_logits, std::span<const float> q_logits);

// perplexity = exp(mean over scored tokens of -ln p(token | the tokens before it)).
class PerplexityAccumulator {
 public:
  void add(std::span<const float> logits, TokenId next);  // the logits that predict `next`
  int64_t tokens() const { return tokens_; }
  double perplexity() const;  // NaN before any token
 private:
  double nll_sum_ = 0;
  int64_t tokens_ = 0;
};

// Mean KL(P_reference || P_level) and the fraction of positions whose argmax agrees.
class DivergenceAccumulator {
 public:
  void add(std::span<const float> reference_logits, std::span<const float> logits);
  int64_t positions() const { return positions_; }
  double mean_kl() const;          // NaN before any position
  double top1_agreement() const;   // NaN before any position
 private:
  double kl_sum_ = 0;
  int64_t agree_ = 0;
  int64_t positions_ = 0;
};

}  // namespace inferscope
