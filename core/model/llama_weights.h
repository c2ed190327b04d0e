// Pointers to a Llama model's tensors, in the format the file stores them (no conversion at load).
#pragma once
#include <cstdint>
#include <vector>

#include "core/model/model_config.h"
#include "kernels/cpu/matmul/matmul.h"

namespace inferscope {

class GgufFile;

struct LlamaLayerWeights {
  const float* attn_norm = nullptr;  // (dim)
  MatrixRef wq;                      // (n_heads * head_dim, dim)
  MatrixRef wk;                      // (n_kv_heads * head_dim, dim)
  MatrixRef wv;                      // (n_kv_heads * head_dim, dim)
  MatrixRef wo;                      // (dim, n_heads * head_dim)
  const float* ffn_norm = nullptr;   // (dim)
  MatrixRef w_gate;                  // (ffn_dim, dim)
  MatrixRef w_up;                    // (ffn_dim, dim)
  MatrixRef w_down;                  // (dim, ffn_dim)
  // Per architecture (architecture.h); null where it has none.
  const float* bq = nullptr;         // (n_heads * head_dim) qwen2: added after the Q projection
  const float* bk = nullptr;         // (n_kv_heads * head_dim)
  const float* bv = nullptr;         // (n_kv_heads * head_dim)
  const float* q_norm = nullptr;     // (head_dim) qwen3, gemma3: RMSNorm weight of every Q head
  const float* k_norm = nullptr;     // (head_dim) and of every K head
  const float* attn_post_norm = nullptr;  // (dim) gemma3: RMSNorm of the attention output before the residual
  const float* ffn_post_norm = nullptr;   // (dim) and of the FFN output
};

struct LlamaWeights {
  MatrixRef token_embd;              // (vocab, dim)
  std::vector<LlamaLayerWeights> layers;
  const float* output_norm = nullptr;  // (dim)
  MatrixRef output;                  // (vocab, dim); token_embd when tied
  const float* rope_freq_factors = nullptr;  // (rope_dim / 2) Llama 3.1+: each RoPE pair's frequency divisor
  std::vector<std::vector<float>> owned_norms;  // vectors converted to f32 when stored otherwise

  size_t matrix_bytes() const;  // bytes of every 2-D weight (the memory a decode step streams)

  // Checks every tensor's presence, shape and type against the config; throws GgufError naming
  // the file and tensor.
  static LlamaWeights from_gguf(const GgufFile& file, const LlamaConfig& config);
};

}  // namespace inferscope
