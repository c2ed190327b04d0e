#include "core/model/forward_recipe.h"

#include "core/model/model_config.h"

namespace inferscope {

std::vector<ForwardStep> ForwardRecipe::all() const {
  std::vector<ForwardStep> steps = before;
  steps.insert(steps.end(), layer.begin(), layer.end());
  steps.insert(steps.end(), after.begin(), after.end());
  return steps;
}

ForwardRecipe forward_recipe(const LlamaConfig& c) {
  using S = ForwardStep;
  const ArchitectureTraits& t = c.traits;
  ForwardRecipe r;
  if (t.embed_scale) r.before.push_back(S::ScaledEmbedding);
  std::vector<S>& l = r.layer;
  l = {S::AttentionNorm, S::QkvProjection};
  if (t.qkv_bias) l.push_back(S::QkvBias);
  if (t.qk_norm) l.push_back(S::QkNorm);
  l.push_back(c.local_layers.empty() ? S::Rope : S::LocalGlobalRope);
  if (c.query_scale != 1.0f) l.push_back(S::QueryScale);
  l.insert(l.end(), {S::KvStore, S::Attention, S::OutputProjection});
  if (t.post_norms) l.push_back(S::AttentionPostNorm);
  l.insert(l.end(), {S::AttentionResidual, S::FfnNorm, S::GateUpProjection});
  l.push_back(t.ffn_activation == FfnActivation::GeluTanh ? S::GeluGate : S::SwiGlu);
  l.push_back(S::DownProjection);
  if (t.post_norms) l.push_back(S::FfnPostNorm);
  l.push_back(S::FfnResidual);
  if (c.final_logit_softcap > 0.0f) r.after.push_back(S::LogitSoftcap);
  return r;
}

std::string_view forward_step_name(ForwardStep step) {
  switch (step) {
    case ForwardStep::ScaledEmbedding: return "scaled embeddings";
    case ForwardStep::AttentionNorm: return "the attention norm";
    case ForwardStep::QkvProjection: return "the Q/K/V projection";
    case ForwardStep::QkvBias: return "Q/K/V biases";
    case ForwardStep::QkNorm: return "per-head Q/K norms";
    case ForwardStep::Rope: return "RoPE";
    case ForwardStep::LocalGlobalRope: return "local attention layers with their own RoPE";
    case ForwardStep::QueryScale: return "query scaling";
    case ForwardStep::KvStore: return "the KV store";
    case ForwardStep::Attention: return "attention";
    case ForwardStep::OutputProjection: return "the output projection";
    case ForwardStep::AttentionPostNorm: return "the post-attention norm";
    case ForwardStep::AttentionResidual: return "the attention residual";
    case ForwardStep::FfnNorm: return "the FFN norm";
    case ForwardStep::GateUpProjection: return "the gate/up projection";
    case ForwardStep::SwiGlu: return "the SwiGLU feed-forward gate";
    case ForwardStep::GeluGate: return "the GELU feed-forward gate";
    case ForwardStep::DownProjection: return "the down projection";
    case ForwardStep::FfnPostNorm: return "the post-FFN norm";
    case ForwardStep::FfnResidual: return "the FFN residual";
    case ForwardStep::LogitSoftcap: return "the final logit soft cap";
  }
  return "an unknown step";
}

}  // namespace inferscope
