// What one engine step asks of the machine, counted from its plan (the roofline's two axes): the
// floating-point operations of its matmuls and attention, and the bytes it must read at least —
// every weight matrix once per step at its quantization level, and each sequence's K/V once per
// layer. RMSNorm, RoPE and SwiGLU (under 1% of the FLOPs) are left out. The workbench's roofline
// view and serve-sim's step timeline both report steps with it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/model/llama_weights.h"

namespace inferscope {

struct StepPlan;

struct StepCost {
  double matmul_flops = 0, attention_flops = 0;
  double weight_bytes = 0, kv_bytes = 0;  // read: weight matrices, K/V rows (written rows included)

  double flops() const { return matmul_flops + attention_flops; }
  double bytes() const { return weight_bytes + kv_bytes; }
  double intensity() const { return bytes() > 0 ? flops() / bytes() : 0; }  // FLOPs per byte
};

class StepCostModel {
 public:
  // `weights` at the level the steps run on; `kv_bytes_per_token`: K and V of one token, every layer.
  StepCostModel(const LlamaConfig& config, const LlamaWeights& weights, size_t kv_bytes_per_token);

  // One sequence computing `n_new` tokens at positions pos0 .. pos0 + n_new - 1, `logit_rows` of
  // them through the output matrix; the weights are counted once per step (step()).
  void add_sequence(StepCost& cost, int32_t pos0, int32_t n_new, int32_t logit_rows) const;
  // A whole step: `drafted[i]` speculative drafts scored after plan sequence i's token (empty: none).
  StepCost step(const StepPlan& plan, std::span<const int32_t> drafted) const;
  // A lone request's prompt of `n_tokens` from an empty cache in chunks of at most `chunk` tokens
  // (one step each), the first token sampled: llama-bench's ppN.
  StepCost prefill(int32_t n_tokens, int32_t chunk) const;
  // `n_tokens` single-token steps from an empty cache (positions 0 .. n - 1): llama-bench's tgN.
  StepCost decode(int32_t n_tokens) const;
  // Bytes of the weight matrices one step reads, whatever its tokens (add_sequence adds the rest).
  double step_weight_bytes() const { return layer_weight_bytes_ + output_bytes_; }

 private:
  double layer_params_ = 0;   // weights a token multiplies in its matmuls, all layers
  double output_params_ = 0;  // the output matrix: per logit row

  double layer_weight_bytes_ = 0, output_bytes_ = 0, embedding_row_bytes_ = 0;
  double kv_bytes_per_token_ = 0;
  double attention_flops_per_key_ = 0;  // per query token and key: QK dot + weighted V sum, all heads and layers
};

}  // namespace inferscope
