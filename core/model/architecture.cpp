#include "core/model/architecture.h"

namespace inferscope {
namespace {

const ArchitectureTraits kArchitectures[] = {
    {"llama", RopePairing::Adjacent, false, false, true},
    {"qwen2", RopePairing::Neox, true, false, false},
    {"qwen3", RopePairing::Neox, false, true, false},
    {"phi3", RopePairing::Neox, false, false, false, true, true},
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

std::vector<std::string> architecture_differences(const ArchitectureTraits& t, bool has_rope_freq_factors,
                                                  bool head_dim_from_key_length, int32_t window_context) {
  std::vector<std::string> lines;
  if (t.rope_pairing == RopePairing::Neox) lines.push_back("RoPE rotates NEOX pairs (i, i + rope_dim/2), not adjacent ones");
  if (t.qkv_bias) lines.push_back("biases added to Q, K and V after their projections");
  if (t.qk_norm) lines.push_back("RMSNorm of every Q and K head before RoPE");
  if (t.fused_qkv) lines.push_back("Q, K and V stored as one tensor (attn_qkv), read as three");
  if (t.fused_gate_up) lines.push_back("gate and up stored as one tensor (ffn_up), read as two");
  if (has_rope_freq_factors) lines.push_back("RoPE frequencies divided by per-pair factors (rope_freqs.weight, Llama 3.1+)");
  if (head_dim_from_key_length) lines.push_back("head size from attention.key_length, not embedding / heads");
  if (window_context > 0) {
    lines.push_back("context limited to the sliding window of " + std::to_string(window_context) +
                    " tokens, within which windowed attention is full attention");
  }
  return lines;
}

}  // namespace inferscope
