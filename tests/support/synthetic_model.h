// Random-weight Llama models of any shape and weight type, written as GGUF by the project's own
// writer, so the loader and the forward pass can be tested at shapes real files lack.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/format/dtype.h"

namespace inferscope {

class LlamaModel;

namespace test {

struct SyntheticModelSpec {
  // "llama", "qwen2" (adds Q/K/V biases), "qwen3" (adds per-head Q/K norms), "phi3" (Q/K/V in one
  // attn_qkv tensor, gate and up in one ffn_up) or "gemma3" (per-head Q/K norms, post-attention and
  // post-FFN norms); the metadata keys carry this prefix.
  std::string architecture = "llama";
  int32_t dim = 64;
  int32_t n_layers = 2;
  int32_t n_heads = 4;
  int32_t n_kv_heads = 2;
  int32_t ffn_dim = 96;
  int32_t vocab = 48;               // at least 3: <unk>, <s>, </s> come first
  int32_t context_length = 64;
  int32_t rope_dim = 0;             // 0: the key is omitted and rope covers the whole head
  float rope_base = 10000.0f;
  float rope_linear_factor = 0.0f;  // > 0: rope.scaling.type "linear" with this factor
  float rope_yarn_factor = 0.0f;    // > 0: rope.scaling.type "yarn" with this factor
  int32_t rope_yarn_orig_ctx = 0;   // > 0: rope.scaling.original_context_length
  float rms_eps = 1e-5f;
  int32_t key_length = 0;           // > 0: attention.key_length (and value_length), the head size
  int32_t sliding_window = 0;       // > 0: attention.sliding_window (gemma3's local layers, else every layer)
  int32_t swa_pattern = 0;          // > 0: attention.sliding_window_pattern
  float rope_base_local = 0.0f;     // > 0: rope.freq_base_swa
  float logit_softcap = 0.0f;       // > 0: final_logit_softcapping
  bool rope_freq_factors = false;   // llama: rope_freqs.weight with random factors in [1, 8]
  bool tied_output = false;         // true: no output.weight, logits reuse token_embd.weight
  DType weight_dtype = DType::F32;  // every 2-D matrix (norm vectors stay f32)
  uint32_t seed = 1;
  int writer_threads = 0;           // threads that draw and quantize the values (0: every core); the
                                    // file is the same for any count

  int32_t head_dim() const { return key_length > 0 ? key_length : dim / n_heads; }
  int32_t effective_rope_dim() const { return rope_dim > 0 ? rope_dim : head_dim(); }
  std::string describe() const;  // "dim 64, 2 layers, 4/2 heads, ..." for failure messages
};

// Writes the model (with a small SentencePiece vocabulary) to `path`. Throws std::invalid_argument
// when a matrix width is not a whole number of blocks of the weight type.
void write_synthetic_model(const SyntheticModelSpec& spec, const std::string& path);

// Writes the model to a temporary file, loads it, and deletes the file (the mapping stays valid).
std::unique_ptr<LlamaModel> load_synthetic_model(const SyntheticModelSpec& spec);

}  // namespace test
}  // namespace inferscope
