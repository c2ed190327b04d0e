// One forward pass as data: the steps each layer takes, in order, and the steps around the layers,
// from the architecture's traits and the file's settings (llama2.c's forward(), written down once).
// LlamaForward and CudaForward walk the layer's steps; a backend that lacks a step names it and
// refuses the model when it loads (the CUDA forward pass: kCudaSteps in core/cuda/cuda_forward.cpp).
#pragma once
#include <string_view>
#include <vector>

namespace inferscope {

struct LlamaConfig;

enum class ForwardStep {
  // before the first layer
  ScaledEmbedding,    // gemma3: each embedding times sqrt(dim)
  // each layer
  AttentionNorm,      // RMSNorm before attention
  QkvProjection,      // Q, K and V for every token of the step, one fused job
  QkvBias,            // qwen2: a bias on each of Q, K and V
  QkNorm,             // qwen3, gemma3: each Q and K head RMS-normalised on its own
  Rope,               // RoPE on Q and K at each token's position, one frequency base for every layer
  LocalGlobalRope,    // the same, local layers with their own frequency base (gemma3)
  QueryScale,         // Q times the file's query scale (Gemma 3 27B)
  KvStore,            // each new token's K and V into the cache
  Attention,          // each sequence's queries over its cached context (a windowed layer's last window)
  OutputProjection,
  AttentionPostNorm,  // gemma3: RMSNorm of the attention's output
  AttentionResidual,
  FfnNorm,
  GateUpProjection,   // gate and up, one fused job
  SwiGlu,             // silu(gate) * up
  GeluGate,           // gemma3: gelu_tanh(gate) * up
  DownProjection,
  FfnPostNorm,        // gemma3: RMSNorm of the FFN's output
  FfnResidual,
  // after the last layer (the final norm and the output head always run)
  LogitSoftcap,       // logits = cap * tanh(logits / cap)
};

struct ForwardRecipe {
  std::vector<ForwardStep> before;  // before the first layer, after the embedding lookup
  std::vector<ForwardStep> layer;   // every layer, in order
  std::vector<ForwardStep> after;   // after the output head
  // Every step of the three, in order.
  std::vector<ForwardStep> all() const;
};

ForwardRecipe forward_recipe(const LlamaConfig& config);
// "the GELU feed-forward gate", as a refusal names it.
std::string_view forward_step_name(ForwardStep step);

}  // namespace inferscope
