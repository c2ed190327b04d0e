// What each supported GGUF architecture changes in the Llama forward pass, as data the loader and
// the forward pass read (llama.cpp's LLM_ARCH_* names and tensor names):
//   llama  adjacent RoPE pairs; optional rope_freqs.weight (Llama 3.1+ frequency factors)
//   qwen2  NEOX RoPE pairs; biases on Q, K and V (attn_q.bias, attn_k.bias, attn_v.bias)
//   qwen3  NEOX RoPE pairs; RMSNorm of each Q and K head before RoPE (attn_q_norm, attn_k_norm)
//   phi3   NEOX RoPE pairs; Q, K and V in one tensor (attn_qkv), gate and up in one (ffn_up, gate
//          rows first); LongRoPE factors (Phi-3 128k) refused by name
// Anything else is refused by name. A sliding window ({arch}.attention.sliding_window) shorter than
// the context limits the context to the window, where windowed attention is full attention.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/ops.h"

namespace inferscope {

struct ArchitectureTraits {
  std::string_view name;                          // general.architecture
  RopePairing rope_pairing = RopePairing::Adjacent;
  bool qkv_bias = false;                          // blk.N.attn_{q,k,v}.bias
  bool qk_norm = false;                           // blk.N.attn_{q,k}_norm.weight, one head wide
  bool rope_freq_factors = false;                 // rope_freqs.weight may be present
  bool fused_qkv = false;                         // blk.N.attn_qkv.weight: Q, K, V rows in one tensor
  bool fused_gate_up = false;                     // blk.N.ffn_up.weight: gate rows, then up rows
};

// The traits of `name`; nullptr when it is not supported.
const ArchitectureTraits* find_architecture(std::string_view name);
// "llama, qwen2, qwen3".
std::string supported_architectures();
// What the architecture does differently from plain Llama, one line each (inspect, the Model tab);
// `head_dim_from_key_length`: the file sets attention.key_length apart from embedding / heads.
// `window_context`: the context was limited to the sliding window of that many tokens (0: not).
std::vector<std::string> architecture_differences(const ArchitectureTraits& traits, bool has_rope_freq_factors,
                                                  bool head_dim_from_key_length, int32_t window_context);

}  // namespace inferscope
