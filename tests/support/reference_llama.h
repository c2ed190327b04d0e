// A plain Llama forward pass in double precision, one token at a time, to check the optimized one
// against. It reads the weights straight from the GGUF tensors by name (not through LlamaWeights)
// and its shape and architecture from the SyntheticModelSpec (not through LlamaConfig or
// core/model/architecture.h), so a loader bug cannot hide by being shared. It keeps its own full K/V
// history. Architectures: llama (adjacent RoPE pairs, optional rope_freqs factors), qwen2 (NEOX
// pairs, Q/K/V biases), qwen3 (NEOX pairs, an RMSNorm on every Q and K head before RoPE), phi3
// (NEOX pairs, Q/K/V rows in one tensor, gate and up rows in one), gemma3 (NEOX pairs, embeddings
// times sqrt(dim), per-head Q/K norms, norms after attention and FFN, a GELU-tanh gate, local layers
// with their own RoPE base, an optional logit soft cap). With a sliding window w, a windowed layer's
// query at position p attends to positions p - w + 1 .. p only: gemma3's local layers, every layer
// of the other architectures (as Hugging Face's Phi-3 and Mistral do).
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/format/dtype.h"
#include "tests/support/synthetic_model.h"

namespace inferscope {

class GgufFile;

namespace test {

// Deliberate bugs, so tests can prove their tolerance would catch them.
enum class ReferenceMutation {
  None,
  RopeOtherPairing,   // rotate the other architecture's pairs: (i, i + rope_dim/2) for (2i, 2i+1) and back
  GqaModulo,          // query head h reads kv head h % n_kv_heads instead of h / (n_heads / n_kv_heads)
  NoArchitectureParts,  // leave out the architecture's own parts: biases, Q/K norms, post norms,
                        // the embedding scale, RoPE factors
  FusedGateUpSwapped,   // phi3: read ffn_up's halves the other way round (up rows first)
  LocalRopeIgnored,     // gemma3: every layer on the global RoPE base
  WindowIgnored,        // every layer attends to the whole context
};

struct ReferenceOptions {
  // The format the optimized matmul rounds each activation row to before multiplying it with a
  // quantized weight (Q8_0 or Q8_1); F32: none. Rounding the reference's inputs the same way keeps
  // the comparison tight for quantized weights.
  DType activation_type = DType::F32;
  // The format the KV cache stores K (after RoPE) and V in (F16, Q8_0); F32: none. Rounding the
  // reference's K/V history the same way leaves only f32 arithmetic between the two.
  DType kv_type = DType::F32;
  ReferenceMutation mutation = ReferenceMutation::None;
};

class ReferenceLlama {
 public:
  ReferenceLlama(const GgufFile& file, const SyntheticModelSpec& spec, const ReferenceOptions& options = {});

  // Appends one token at the next position; returns the vocab logits there.
  std::vector<double> step(int32_t token);
  int32_t length() const { return length_; }

 private:
  struct Matrix {
    int64_t rows = 0, cols = 0;
    std::vector<double> values;  // row-major, dequantized
  };
  struct Layer {
    std::vector<double> attn_norm, ffn_norm;
    std::vector<double> bq, bk, bv;        // qwen2
    std::vector<double> q_norm, k_norm;    // qwen3, gemma3
    std::vector<double> attn_post_norm, ffn_post_norm;  // gemma3
    Matrix wq, wk, wv, wo, w_gate, w_up, w_down;
    std::vector<double> keys, values;  // (length, n_kv_heads * head_dim) after RoPE / as projected
  };
  static Matrix load_matrix(const GgufFile& file, const std::string& name, int64_t rows, int64_t cols);
  static Matrix rows_of(const Matrix& m, int64_t first, int64_t rows);
  static std::vector<double> load_vector(const GgufFile& file, const std::string& name, int64_t n);
  void rope(double* head, int32_t pos, int32_t layer) const;
  // YaRN: what pair `pair`'s frequency is multiplied by (1 where kept, 1/factor where interpolated).
  double yarn_frequency_factor(int32_t pair, double base, double factor) const;
  // With a sliding window: gemma3's local layers (all but every swa_pattern-th), every layer of another
  // architecture.
  bool windowed_layer(int32_t layer) const;
  // gemma3's windowed layers, which have their own RoPE base.
  bool local_layer(int32_t layer) const;
  std::vector<double> rmsnorm(const std::vector<double>& x, const std::vector<double>& weight) const;
  // rmsnorm() of each head_dim slice of x (qwen3's Q and K norms).
  void rmsnorm_heads(std::vector<double>& x, const std::vector<double>& weight) const;
  bool neox() const { return spec_.architecture != "llama"; }
  std::vector<double> matvec(const Matrix& w, const std::vector<double>& x) const;
  // The newest position's attention over the history (the last sliding_window positions when `windowed`).
  std::vector<double> attention(const Layer& layer, const std::vector<double>& q, bool windowed) const;

  SyntheticModelSpec spec_;
  ReferenceOptions options_;
  Matrix token_embd_, output_;
  std::vector<double> output_norm_;
  std::vector<double> rope_factors_;  // llama with rope_freqs.weight: each pair's frequency divisor
  std::vector<Layer> layers_;
  int32_t length_ = 0;
};

}  // namespace test
}  // namespace inferscope
