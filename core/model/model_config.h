// Hyperparameters of a Llama-family model, read from GGUF metadata.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/architecture.h"

namespace inferscope {

class GgufFile;

struct LlamaConfig {
  std::string architecture;   // general.architecture (one of architecture.h's)
  ArchitectureTraits traits;  // what that architecture changes (architecture.h)
  std::string name;           // the file's name without .gguf: what the user opened, and what views call it
  std::string name_in_file;   // general.name ("" when absent), often a training run's ("Smollm2 135M 8k Lc100K Mix1 Ep2")
  int32_t n_layers = 0;       // {arch}.block_count
  int32_t dim = 0;            // {arch}.embedding_length
  int32_t n_heads = 0;        // {arch}.attention.head_count
  int32_t n_kv_heads = 0;     // {arch}.attention.head_count_kv (GQA when < n_heads)
  int32_t head_dim = 0;       // {arch}.attention.key_length, else dim / n_heads
  bool head_dim_from_key_length = false;  // key_length set and not dim / n_heads (Qwen3, Gemma 3)
  int32_t ffn_dim = 0;        // {arch}.feed_forward_length
  int32_t vocab_size = 0;     // rows of token_embd.weight
  int32_t context_length = 0; // {arch}.context_length
  int32_t rope_dim = 0;       // {arch}.rope.dimension_count (default head_dim)
  float rope_freq_base = 10000.0f;  // {arch}.rope.freq_base (llama.cpp's default 10000)
  float rope_freq_scale = 1.0f;     // 1 / {arch}.rope.scaling.factor (linear or YaRN scaling)
  std::optional<RopeYarn> rope_yarn;  // rope.scaling.type yarn: the global layers' YaRN parameters
  int32_t rope_yarn_orig_ctx = 0;     // {arch}.rope.scaling.original_context_length (default context_length)
  float rms_eps = 1e-5f;            // {arch}.attention.layer_norm_rms_epsilon
  bool tied_output = false;         // no output.weight: the classifier reuses token_embd.weight
  bool rope_freq_factors = false;   // rope_freqs.weight divides each RoPE pair's frequency (Llama 3.1+)
  int32_t sliding_window = 0;       // {arch}.attention.sliding_window (0: none)
  // Layers with a sliding window and their own RoPE (Gemma 3's local layers): one flag per layer,
  // empty when every layer is alike (then a sliding window holds for every layer). Local layers use
  // rope_freq_base_local and no RoPE scaling.
  std::vector<bool> local_layers;
  float rope_freq_base_local = 10000.0f;  // {arch}.rope.freq_base_swa
  float query_scale = 1.0f;               // queries multiplied by this before attention (Gemma 3 27B)
  float final_logit_softcap = 0.0f;       // {arch}.final_logit_softcapping: logits = c tanh(logits / c) (0: none)

  int32_t q_dim() const { return n_heads * head_dim; }
  int32_t kv_dim() const { return n_kv_heads * head_dim; }
  // The sliding window of layer `layer`'s attention (0: it sees the whole context): a local layer's,
  // or every layer's where the file sets a window without a local/global pattern (Phi-3, Mistral).
  int32_t layer_window(int32_t layer) const;
  // How many layers attend through the sliding window.
  int32_t windowed_layers() const;
  // What this model does differently from plain Llama, one line each (empty for plain Llama).
  std::vector<std::string> differences() const;
  // Throws GgufError naming the file and key for a missing or impossible value, and refuses
  // architectures other than those in architecture.h by name.
  static LlamaConfig from_gguf(const GgufFile& file);
};

}  // namespace inferscope
