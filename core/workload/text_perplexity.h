// Token-level perplexity of a text through the engine (inferscope-cli perplexity, the Learn tab's
// quantization experiment): the tokens are cut into windows of ctx by a method (quality.h: all
// tokens, or llama-perplexity's chunks), each window runs on a fresh KV cache, and each scored
// position's logits score the next token. With a reference level, the same windows also run at that
// level for KL(P_reference || P) and top-1 agreement.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/engine/engine_config.h"
#include "core/quant/matrix_conversion.h"
#include "core/quant/quality.h"
#include "core/quant/quant_plan.h"
#include "core/quant/weight_quant.h"
#include "core/tokenizer/vocab.h"

namespace inferscope {

class LlamaModel;

struct LevelPerplexity {
  std::string quant;         // the level's name
  double perplexity = 0;
  size_t weight_bytes = 0;   // the weights at that level
  std::vector<MatrixFallback> fallbacks;  // matrices in another format than the level's policy wanted
};

struct TextPerplexity {
  LevelPerplexity level;
  PerplexityMethod method = PerplexityMethod::AllTokens;
  int64_t tokens = 0;  // scored
  size_t windows = 0;
  std::optional<LevelPerplexity> reference;  // with a reference level
  double kl_divergence_mean = 0, top1_agreement = 0;
};

// How a level's weight conversion reports its progress (made once per level scored).
using ConversionProgressFactory = std::function<ConversionProgressFn(WeightQuant level)>;

// `config`'s quantization level (and its other toggles) score the text. Throws std::invalid_argument
// for a text too short for one window or a bad ctx, and std::runtime_error for a request the engine
// fails (naming why).
TextPerplexity measure_text_perplexity(const LlamaModel& model, const EngineConfig& config,
                                       std::span<const TokenId> tokens, int64_t ctx,
                                       std::optional<WeightQuant> reference = std::nullopt,
                                       const ConversionProgressFactory& on_conversion = {},
                                       PerplexityMethod method = PerplexityMethod::AllTokens);

}  // namespace inferscope
