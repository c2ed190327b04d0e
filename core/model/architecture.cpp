#include "core/model/architecture.h"

namespace inferscope {
namespace {

const ArchitectureTraits kArchitectures[] = {
    {.name = "llama", .rope_freq_factors = true},
    {.name = "qwen2", .rope_pairing = RopePairing::Neox, .qkv_bias = true},
    {.name = "qwen3", .rope_pairing = RopePairing::Neox, .qk_norm = true},
    {.name = "phi3", .rope_pairing = RopePairing::Neox, .fused_qkv = true, .fused_gate_up = true},
    {.name = "gemma3",
     .rope_pairing = RopePairing::Neox,
     .qk_norm = true,
     .embed_scale = true,
     .post_norms = true,
     .ffn_activation = FfnActivation::GeluTanh,
     .swa_pattern = 6},
};

}  // namespace

const ArchitectureTraits* find_architecture(std::string_view name) {
  for (const ArchitectureTraits& a : kArchitectures) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::string supported_architectures() {
  std::string names;
  for (const ArchitectureTraits& a : kArchitectures) names += (names.empty() ? "" : ", ") + std::string(a.name);
  return names;
}

std::vector<std::string> architecture_differences(const ArchitectureTraits& t) {
  std::vector<std::string> lines;
  if (t.rope_pairing == RopePairing::Neox) lines.push_back("RoPE rotates NEOX pairs (i, i + rope_dim/2), not adjacent ones");
  if (t.qkv_bias) lines.push_back("biases added to Q, K and V after their projections");
  if (t.qk_norm) lines.push_back("RMSNorm of every Q and K head before RoPE");
  if (t.fused_qkv) lines.push_back("Q, K and V stored as one tensor (attn_qkv), read as three");
  if (t.fused_gate_up) lines.push_back("gate and up stored as one tensor (ffn_up), read as two");
  if (t.embed_scale) lines.push_back("token embeddings scaled by sqrt(dim)");
  if (t.post_norms) lines.push_back("RMSNorm after attention and after the FFN as well as before them");
  if (t.ffn_activation == FfnActivation::GeluTanh) lines.push_back("FFN gate through GELU (tanh approximation), not SiLU");
  return lines;
}

}  // namespace inferscope
