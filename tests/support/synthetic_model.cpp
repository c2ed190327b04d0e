#include "tests/support/synthetic_model.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/gguf/gguf_writer.h"
#include "core/model/llama_model.h"
#include "core/tokenizer/vocab.h"
#include "kernels/cpu/quantize.h"

namespace inferscope::test {
namespace {

// Uniform values in [-scale, scale]; random, so no bug can hide behind zeros or symmetry.
std::vector<float> random_values(std::mt19937& rng, size_t n, float scale) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A (rows, cols) matrix of `values` in the spec's weight type, each row quantized on its own as the
// loader expects.
void add_matrix_values(GgufWriter& w, const std::string& name, DType type, int64_t rows, int64_t cols,
                       const std::vector<float>& values) {
  if (type == DType::F32) {
    w.add_tensor_f32(name, {cols, rows}, values);
    return;
  }
  const size_t stride = row_bytes(type, cols);  // throws unless cols is a whole number of blocks
  std::vector<uint8_t> bytes(stride * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) quantize_row(type, values.data() + r * cols, bytes.data() + r * stride, cols);
  w.add_tensor(name, type, {cols, rows}, std::move(bytes));
}

void add_matrix(GgufWriter& w, const std::string& name, DType type, int64_t rows, int64_t cols, float scale,
                std::mt19937& rng) {
  add_matrix_values(w, name, type, rows, cols, random_values(rng, static_cast<size_t>(rows * cols), scale));
}

// Matrices of the same width stacked row-wise into one tensor (phi3's attn_qkv and ffn_up), each
// part's values drawn as add_matrix draws them.
void add_fused_matrix(GgufWriter& w, const std::string& name, DType type, const std::vector<std::pair<int64_t, float>>& parts,
                      int64_t cols, std::mt19937& rng) {
  std::vector<float> values;
  int64_t rows = 0;
  for (const auto& [part_rows, scale] : parts) {
    const std::vector<float> part = random_values(rng, static_cast<size_t>(part_rows * cols), scale);
    values.insert(values.end(), part.begin(), part.end());
    rows += part_rows;
  }
  add_matrix_values(w, name, type, rows, cols, values);
}

// Norm weights around 1 (never 0), so every channel contributes.
std::vector<float> norm_values(std::mt19937& rng, int64_t n) {
  std::vector<float> v = random_values(rng, static_cast<size_t>(n), 0.5f);
  for (float& x : v) x += 1.0f;
  return v;
}

// <unk>, <s>, </s>, then plain pieces "t3", "t4", ... with descending scores.
void add_vocabulary(GgufWriter& w, int32_t n) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<float> scores = {0.0f, 0.0f, 0.0f};
  std::vector<int32_t> types = {static_cast<int32_t>(TokenType::UNKNOWN), static_cast<int32_t>(TokenType::CONTROL),
                                static_cast<int32_t>(TokenType::CONTROL)};
  for (int32_t i = 3; i < n; ++i) {
    tokens.push_back(std::string(1, 't').append(std::to_string(i)));
    scores.push_back(-static_cast<float>(i));
    types.push_back(static_cast<int32_t>(TokenType::NORMAL));
  }
  w.set("tokenizer.ggml.model", GgufValue::str("llama"));
  w.set("tokenizer.ggml.tokens", GgufValue::strings(tokens));
  w.set("tokenizer.ggml.scores", GgufValue::f32s(scores));
  w.set("tokenizer.ggml.token_type", GgufValue::i32s(types));
  w.set("tokenizer.ggml.unknown_token_id", GgufValue::u32(0));
  w.set("tokenizer.ggml.bos_token_id", GgufValue::u32(1));
  w.set("tokenizer.ggml.eos_token_id", GgufValue::u32(2));
}

}  // namespace

std::string SyntheticModelSpec::describe() const {
  return architecture + ", dim " + std::to_string(dim) + ", " + std::to_string(n_layers) + " layers, " + std::to_string(n_heads) +
         "/" + std::to_string(n_kv_heads) + " heads, ffn " + std::to_string(ffn_dim) + ", vocab " +
         std::to_string(vocab) + ", head_dim " + std::to_string(head_dim()) + ", rope_dim " +
         std::to_string(effective_rope_dim()) + (rope_freq_factors ? " with factors" : "") + ", base " +
         std::to_string(rope_base) + (tied_output ? ", tied" : ", untied") + ", context " + std::to_string(context_length) +
         (sliding_window > 0 ? ", window " + std::to_string(sliding_window) : "") + ", " +
         std::string(dtype_name(weight_dtype)) + ", seed " + std::to_string(seed);
}

void write_synthetic_model(const SyntheticModelSpec& s, const std::string& path) {
  if (s.vocab < 3) throw std::invalid_argument("synthetic model: vocab must hold <unk>, <s>, </s>");
  GgufWriter w;
  const std::string a = s.architecture + ".";
  w.set("general.architecture", GgufValue::str(s.architecture));
  w.set("general.name", GgufValue::str("synthetic"));
  w.set(a + "block_count", GgufValue::u32(static_cast<uint32_t>(s.n_layers)));
  w.set(a + "embedding_length", GgufValue::u32(static_cast<uint32_t>(s.dim)));
  w.set(a + "attention.head_count", GgufValue::u32(static_cast<uint32_t>(s.n_heads)));
  w.set(a + "attention.head_count_kv", GgufValue::u32(static_cast<uint32_t>(s.n_kv_heads)));
  w.set(a + "feed_forward_length", GgufValue::u32(static_cast<uint32_t>(s.ffn_dim)));
  w.set(a + "context_length", GgufValue::u32(static_cast<uint32_t>(s.context_length)));
  w.set(a + "rope.freq_base", GgufValue::f32(s.rope_base));
  w.set(a + "attention.layer_norm_rms_epsilon", GgufValue::f32(s.rms_eps));
  if (s.rope_dim > 0) w.set(a + "rope.dimension_count", GgufValue::u32(static_cast<uint32_t>(s.rope_dim)));
  if (s.rope_linear_factor > 0.0f) {
    w.set(a + "rope.scaling.type", GgufValue::str("linear"));
    w.set(a + "rope.scaling.factor", GgufValue::f32(s.rope_linear_factor));
  }
  if (s.rope_yarn_factor > 0.0f) {
    w.set(a + "rope.scaling.type", GgufValue::str("yarn"));
    w.set(a + "rope.scaling.factor", GgufValue::f32(s.rope_yarn_factor));
  }
  if (s.rope_yarn_orig_ctx > 0) {
    w.set(a + "rope.scaling.original_context_length", GgufValue::u32(static_cast<uint32_t>(s.rope_yarn_orig_ctx)));
  }
  if (s.sliding_window > 0) w.set(a + "attention.sliding_window", GgufValue::u32(static_cast<uint32_t>(s.sliding_window)));
  if (s.swa_pattern > 0) w.set(a + "attention.sliding_window_pattern", GgufValue::u32(static_cast<uint32_t>(s.swa_pattern)));
  if (s.rope_base_local > 0.0f) w.set(a + "rope.freq_base_swa", GgufValue::f32(s.rope_base_local));
  if (s.logit_softcap > 0.0f) w.set(a + "final_logit_softcapping", GgufValue::f32(s.logit_softcap));
  if (s.key_length > 0) {
    w.set(a + "attention.key_length", GgufValue::u32(static_cast<uint32_t>(s.key_length)));
    w.set(a + "attention.value_length", GgufValue::u32(static_cast<uint32_t>(s.key_length)));
  }
  add_vocabulary(w, s.vocab);

  std::mt19937 rng(s.seed);
  const int64_t q_dim = int64_t{s.n_heads} * s.head_dim(), kv_dim = int64_t{s.n_kv_heads} * s.head_dim();
  // Projections scaled by 1/sqrt(fan-in) keep activations near unit size through every layer;
  // q and k a little larger so attention is peaked and positions (RoPE) matter.
  const float in_dim = 1.0f / std::sqrt(static_cast<float>(s.dim));
  const float in_q = 1.0f / std::sqrt(static_cast<float>(q_dim));
  const float in_ffn = 1.0f / std::sqrt(static_cast<float>(s.ffn_dim));
  add_matrix(w, "token_embd.weight", s.weight_dtype, s.vocab, s.dim, 1.0f, rng);
  for (int32_t l = 0; l < s.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    w.add_tensor_f32(p + "attn_norm.weight", {s.dim}, norm_values(rng, s.dim));
    if (s.architecture == "phi3") {
      add_fused_matrix(w, p + "attn_qkv.weight", s.weight_dtype,
                       {{q_dim, 3.0f * in_dim}, {kv_dim, 3.0f * in_dim}, {kv_dim, 1.7f * in_dim}}, s.dim, rng);
    } else {
      add_matrix(w, p + "attn_q.weight", s.weight_dtype, q_dim, s.dim, 3.0f * in_dim, rng);
      add_matrix(w, p + "attn_k.weight", s.weight_dtype, kv_dim, s.dim, 3.0f * in_dim, rng);
      add_matrix(w, p + "attn_v.weight", s.weight_dtype, kv_dim, s.dim, 1.7f * in_dim, rng);
    }
    add_matrix(w, p + "attn_output.weight", s.weight_dtype, s.dim, q_dim, 1.7f * in_q, rng);
    w.add_tensor_f32(p + "ffn_norm.weight", {s.dim}, norm_values(rng, s.dim));
    if (s.architecture == "phi3") {
      add_fused_matrix(w, p + "ffn_up.weight", s.weight_dtype, {{s.ffn_dim, 1.7f * in_dim}, {s.ffn_dim, 1.7f * in_dim}},
                       s.dim, rng);
    } else {
      add_matrix(w, p + "ffn_gate.weight", s.weight_dtype, s.ffn_dim, s.dim, 1.7f * in_dim, rng);
      add_matrix(w, p + "ffn_up.weight", s.weight_dtype, s.ffn_dim, s.dim, 1.7f * in_dim, rng);
    }
    add_matrix(w, p + "ffn_down.weight", s.weight_dtype, s.dim, s.ffn_dim, 1.7f * in_ffn, rng);
    // The architectures' own tensors come last, so a llama file's values do not depend on them.
    if (s.architecture == "qwen2") {
      w.add_tensor_f32(p + "attn_q.bias", {q_dim}, random_values(rng, static_cast<size_t>(q_dim), 0.5f));
      w.add_tensor_f32(p + "attn_k.bias", {kv_dim}, random_values(rng, static_cast<size_t>(kv_dim), 0.5f));
      w.add_tensor_f32(p + "attn_v.bias", {kv_dim}, random_values(rng, static_cast<size_t>(kv_dim), 0.5f));
    }
    if (s.architecture == "qwen3" || s.architecture == "gemma3") {
      w.add_tensor_f32(p + "attn_q_norm.weight", {s.head_dim()}, norm_values(rng, s.head_dim()));
      w.add_tensor_f32(p + "attn_k_norm.weight", {s.head_dim()}, norm_values(rng, s.head_dim()));
    }
    if (s.architecture == "gemma3") {
      w.add_tensor_f32(p + "post_attention_norm.weight", {s.dim}, norm_values(rng, s.dim));
      w.add_tensor_f32(p + "post_ffw_norm.weight", {s.dim}, norm_values(rng, s.dim));
    }
  }
  w.add_tensor_f32("output_norm.weight", {s.dim}, norm_values(rng, s.dim));
  if (!s.tied_output) add_matrix(w, "output.weight", s.weight_dtype, s.vocab, s.dim, 1.7f * in_dim, rng);
  if (s.rope_freq_factors) {
    // Llama 3.1's factors run from 1 (fast pairs) to 8 (slow pairs); random ones catch any mix-up.
    std::vector<float> factors = random_values(rng, static_cast<size_t>(s.effective_rope_dim() / 2), 3.5f);
    for (float& f : factors) f += 4.5f;
    w.add_tensor_f32("rope_freqs.weight", {s.effective_rope_dim() / 2}, factors);
  }
  w.write(path);
}

std::unique_ptr<LlamaModel> load_synthetic_model(const SyntheticModelSpec& spec) {
  static std::atomic<int> counter{0};
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("inferscope_synthetic_" + std::to_string(::getpid()) + "_" +
                                      std::to_string(counter++) + ".gguf");
  write_synthetic_model(spec, path.string());
  std::unique_ptr<LlamaModel> model;
  try {
    model = LlamaModel::load(path.string());
  } catch (...) {
    std::filesystem::remove(path);
    throw;
  }
  std::filesystem::remove(path);  // the mapping keeps the pages alive
  return model;
}

}  // namespace inferscope::test
