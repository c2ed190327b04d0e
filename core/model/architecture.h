// What each supported GGUF architecture changes in the Llama forward pass, as data the loader and
// the forward pass read (llama.cpp's LLM_ARCH_* names and tensor names):
//   llama  adjacent RoPE pairs; optional rope_freqs.weight (Llama 3.1+ frequency factors)
//   qwen2  NEOX RoPE pairs; biases on Q, K and V (attn_q.bias, attn_k.bias, attn_v.bias)
//   qwen3  NEOX RoPE pairs; RMSNorm of each Q and K head before RoPE (attn_q_norm, attn_k_norm)
//   phi3   NEOX RoPE pairs; Q, K and V in one tensor (attn_qkv), gate and up in one (ffn_up, gate
//          rows first); LongRoPE factors (Phi-3 128k) refused by name
//   gemma3 NEOX RoPE pairs; embeddings scaled by sqrt(dim); per-head Q/K RMSNorm; RMSNorm after
//          attention and after the FFN too (post_attention_norm, post_ffw_norm); a GELU-tanh gated FFN;
//          with a sliding window, every 6th layer global (rope.freq_base) and the others local
//          (rope.freq_base_swa, default 10000; attention.sliding_window_pattern overrides the 6)
// Anything else is refused by name. A sliding window ({arch}.attention.sliding_window) masks keys
// `window` or more positions before their query: in gemma3's local layers, and in every layer where
// the architecture has no local/global pattern (phi3, Mistral's llama files). There we follow the
// model's definition (Hugging Face applies the window), where llama.cpp 0.3.36 does not: it turns
// Phi-3's window off (models/phi3.cpp) and its llama architecture ignores the key.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cpu/ops.h"

namespace inferscope {

enum class FfnActivation { SiLU, GeluTanh };  // SwiGLU (Llama) or the tanh-GELU gate (Gemma)

struct ArchitectureTraits {
  std::string_view name;                          // general.architecture
  RopePairing rope_pairing = RopePairing::Adjacent;
  bool qkv_bias = false;                          // blk.N.attn_{q,k,v}.bias
  bool qk_norm = false;                           // blk.N.attn_{q,k}_norm.weight, one head wide
  bool rope_freq_factors = false;                 // rope_freqs.weight may be present
  bool fused_qkv = false;                         // blk.N.attn_qkv.weight: Q, K, V rows in one tensor
  bool fused_gate_up = false;                     // blk.N.ffn_up.weight: gate rows, then up rows
  bool embed_scale = false;                       // token embeddings times sqrt(dim)
  bool post_norms = false;                        // blk.N.post_attention_norm, blk.N.post_ffw_norm
  FfnActivation ffn_activation = FfnActivation::SiLU;
  int32_t swa_pattern = 0;                        // with a sliding window: every n-th layer global (0: all windowed)
};

// The traits of `name`; nullptr when it is not supported.
const ArchitectureTraits* find_architecture(std::string_view name);
// The names above, comma-separated: "llama, qwen2, qwen3, phi3, gemma3".
std::string supported_architectures();
// What the architecture does differently from plain Llama, one line each (inspect, the Model tab;
// LlamaConfig::differences() adds what the file itself sets).
std::vector<std::string> architecture_differences(const ArchitectureTraits& traits);

}  // namespace inferscope
