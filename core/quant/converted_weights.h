// A loaded model's weights at one quantization level: the converted matrices (owned here) and a
// LlamaWeights view of them for the forward pass. The model's file stays mapped and untouched, so
// switching levels needs no reload; matrices already in the level's format and the norm vectors
// point at the model's own data.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/model/llama_weights.h"
#include "core/quant/matrix_conversion.h"
#include "core/quant/quant_plan.h"
#include "core/quant/weight_quant.h"

namespace inferscope {

class LlamaModel;
class ThreadPool;

struct ConvertedMatrix {
  std::string name;           // the GGUF tensor
  MatrixRef source;           // as the file stores it
  MatrixRef weights;          // as the forward pass reads it at this level (== source when kept)
  MatrixFormat format;        // at this level (the file's own type at native)
};

class ConvertedWeights {
 public:
  // Converts every matrix of `model` whose stored_type() at `level` differs from its own (rows in
  // parallel on `pool`). Throws ConversionCancelled when control.cancel is set.
  static std::unique_ptr<ConvertedWeights> convert(const LlamaModel& model, WeightQuant level, ThreadPool& pool,
                                                   const ConversionControl& control = {});
  ConvertedWeights(const ConvertedWeights&) = delete;
  ConvertedWeights& operator=(const ConvertedWeights&) = delete;

  WeightQuant level() const { return level_; }
  const LlamaWeights& weights() const { return weights_; }
  size_t weight_bytes() const { return weights_.matrix_bytes(); }
  // Each distinct matrix once, token_embd first (a tied output is token_embd itself).
  const std::vector<ConvertedMatrix>& matrices() const { return matrices_; }
  int converted_count() const;                  // matrices re-encoded (the rest are the model's own)
  std::vector<MatrixFallback> fallbacks() const;  // the matrices stored in another format than the policy wanted

 private:
  ConvertedWeights() = default;
  WeightQuant level_ = WeightQuant::Native;
  LlamaWeights weights_;
  std::vector<ConvertedMatrix> matrices_;
  std::vector<std::vector<uint8_t>> buffers_;  // the re-encoded matrices weights_ points into
};

}  // namespace inferscope
