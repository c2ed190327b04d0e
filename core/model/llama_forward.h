// The Llama forward pass on the CPU over a batch of sequences that share one step (llama2.c's
// forward(), batched): every sequence brings a run of new tokens; K/V go through the KvCache; logits
// are computed only where asked.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "core/model/forward_options.h"
#include "core/model/forward_pass.h"
#include "core/model/forward_recipe.h"
#include "core/model/llama_weights.h"
#include "kernels/cpu/matmul/matmul.h"

namespace inferscope {

class LlamaModel;

class LlamaForward final : public ForwardPass {
 public:
  // `options.matmul` says how activations meet quantized weights (exact f32 by default, or int8 as
  // llama.cpp). Runs on the model's own weights.
  explicit LlamaForward(const LlamaModel& model, const ForwardOptions& options = {});
  // Runs on `weights` (the model's matrices at another quantization level); they must have the
  // model's shapes and outlive the LlamaForward.
  LlamaForward(const LlamaModel& model, const LlamaWeights& weights, const ForwardOptions& options = {});

  // ForwardPass::run on the CPU (an early exit leaves K/V of the later layers as they are).
  ForwardStats run(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention, ThreadPool& pool,
                   std::vector<float>& logits, int32_t layers = 0) override;

 private:
  // The matrices whose kernel multiplies packed rows (matmul.h's uses_packed_rows) get them, all in
  // one arena of large pages: packed_weights_ is the caller's weights pointing at those rows.
  void pack_rows(const LlamaWeights& weights);

  const LlamaModel& model_;
  const LlamaWeights* weights_;  // the caller's, or packed_weights_
  MatmulOptions matmul_;
  ForwardRecipe recipe_;  // the model's steps, which run() walks
  LlamaWeights packed_weights_;
  LargePageBytes packed_rows_;  // every packed matrix, one after another
  // Activations of the step, (tokens, width) row-major.
  std::vector<float> x_, xb_, q_, k_, v_, att_, gate_, up_, last_;
  std::vector<float> rope_cos_, rope_sin_;  // (tokens, rope_dim / 2)
  std::vector<float> rope_cos_local_, rope_sin_local_;  // the same for gemma3's local layers
};

}  // namespace inferscope
