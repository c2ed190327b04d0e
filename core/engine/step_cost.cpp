#include "core/engine/step_cost.h"

#include <algorithm>

#include "core/sched/scheduler.h"

namespace inferscope {
namespace {

double params(const MatrixRef& m) { return static_cast<double>(m.rows) * static_cast<double>(m.cols); }
double bytes(const MatrixRef& m) { return static_cast<double>(m.row_stride) * static_cast<double>(m.rows); }

}  // namespace

StepCostModel::StepCostModel(const LlamaConfig& config, const LlamaWeights& weights, size_t kv_bytes_per_token)
    : kv_bytes_per_token_(static_cast<double>(kv_bytes_per_token)) {
  for (const LlamaLayerWeights& l : weights.layers) {
    for (const MatrixRef* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      layer_params_ += params(*m);
      layer_weight_bytes_ += bytes(*m);
    }
  }
  output_params_ = params(weights.output);
  output_bytes_ = bytes(weights.output);
  embedding_row_bytes_ = static_cast<double>(weights.token_embd.row_stride);
  // Per query head and key: q·k (head_dim multiply-adds) and p·v (head_dim more), 2 FLOPs each.
  attention_flops_per_key_ = 4.0 * config.head_dim * config.n_heads * config.n_layers;
}

void StepCostModel::add_sequence(StepCost& cost, int32_t pos0, int32_t n_new, int32_t logit_rows) const {
  const double n = n_new;
  cost.matmul_flops += 2.0 * (layer_params_ * n + output_params_ * logit_rows);
  // Causal: the token at position p attends to p + 1 keys; summed over pos0 .. pos0 + n - 1.
  const double keys = n * pos0 + n * (n + 1) / 2;
  cost.attention_flops += attention_flops_per_key_ * keys;
  // Its whole context's K/V read once per layer (the new rows written too), and its embedding rows.
  cost.kv_bytes += kv_bytes_per_token_ * (pos0 + n);
  cost.weight_bytes += embedding_row_bytes_ * n;
}

StepCost StepCostModel::step(const StepPlan& plan, std::span<const int32_t> drafted) const {
  StepCost cost;
  if (plan.seqs.empty()) return cost;
  cost.weight_bytes = step_weight_bytes();
  for (size_t i = 0; i < plan.seqs.size(); ++i) {
    const ScheduledSeq& s = plan.seqs[i];
    const int32_t drafts = i < drafted.size() ? drafted[i] : 0;
    // A sampling sequence needs logits at its last token and at each draft it verifies.
    add_sequence(cost, s.pos0(), s.n_new + drafts, s.sample ? 1 + drafts : 0);
  }
  return cost;
}

StepCost StepCostModel::prefill(int32_t n_tokens, int32_t chunk) const {
  StepCost cost;
  for (int32_t pos0 = 0; pos0 < n_tokens; pos0 += chunk) {
    const int32_t n = std::min(chunk, n_tokens - pos0);
    cost.weight_bytes += step_weight_bytes();
    add_sequence(cost, pos0, n, pos0 + n == n_tokens ? 1 : 0);
  }
  return cost;
}

StepCost StepCostModel::decode(int32_t n_tokens) const {
  StepCost cost;
  for (int32_t pos = 0; pos < n_tokens; ++pos) {
    cost.weight_bytes += step_weight_bytes();
    add_sequence(cost, pos, 1, 1);
  }
  return cost;
}

}  // namespace inferscope
