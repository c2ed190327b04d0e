#include "tests/support/synthetic_model.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/gguf/gguf_writer.h"
#include "core/model/llama_model.h"
#include "core/tokenizer/vocab.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope::test {
namespace {

// One draw of random values (a matrix, a norm's weights): value i is a hash of (the draw's key, i),
// so any run of them can be drawn on any thread, the same on any number of threads.
struct Draw {
  uint64_t key;
  float scale;

  // splitmix64's finaliser: every input bit moves every output bit
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // values first .. first + n - 1, uniform in [-scale, scale): 24 random bits each
  void fill(uint64_t first, float* out, size_t n) const {
    for (size_t i = 0; i < n; ++i) {
      const float u = static_cast<float>(mix(key + (first + i) * 0x9E3779B97F4A7C15ull) >> 40) * 0x1p-24f;
      out[i] = scale * (2.0f * u - 1.0f);
    }
  }
};

// The draws of one model, numbered in the order they are made, and the threads that make them.
class Draws {
 public:
  Draws(uint32_t seed, int threads) : seed_(seed), pool_(threads) {}

  // The next draw, uniform in [-scale, scale]; random, so no bug can hide behind zeros or symmetry.
  Draw next(float scale) { return {Draw::mix(uint64_t{seed_} << 32 | next_draw_++), scale}; }

  // The next draw's first n values.
  std::vector<float> uniform(size_t n, float scale) {
    const Draw draw = next(scale);
    std::vector<float> v(n);
    for_runs(static_cast<int64_t>(n), kRun, [&](int64_t begin, int64_t end) {
      draw.fill(static_cast<uint64_t>(begin), v.data() + begin, static_cast<size_t>(end - begin));
    });
    return v;
  }

  // fn(begin, end) over [0, n) in runs of at least `grain`, on every thread.
  void for_runs(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& fn) {
    pool_.parallel_for(n, grain, fn);
  }

 private:
  static constexpr int64_t kRun = 1 << 16;
  uint32_t seed_;
  uint32_t next_draw_ = 0;
  ThreadPool pool_;
};

// Matrices of the same width stacked row-wise into one tensor in the spec's weight type (phi3's
// attn_qkv and ffn_up; one part for any other matrix), each part a draw of its own scale, each row
// quantized on its own as the loader expects.
void add_matrix_parts(GgufWriter& w, const std::string& name, DType type, const std::vector<std::pair<int64_t, float>>& parts,
                      int64_t cols, Draws& draws) {
  std::vector<Draw> part_draws;
  std::vector<int64_t> part_end;  // the row after each part
  int64_t rows = 0;
  for (const auto& [part_rows, scale] : parts) {
    part_draws.push_back(draws.next(scale));
    part_end.push_back(rows += part_rows);
  }
  // row r's values, from its part's draw
  const auto draw_row = [&](int64_t r, float* out) {
    size_t p = 0;
    while (r >= part_end[p]) ++p;
    const int64_t first_row = p == 0 ? 0 : part_end[p - 1];
    part_draws[p].fill(static_cast<uint64_t>((r - first_row) * cols), out, static_cast<size_t>(cols));
  };
  if (type == DType::F32) {
    std::vector<float> values(static_cast<size_t>(rows * cols));
    draws.for_runs(rows, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) draw_row(r, values.data() + r * cols);
    });
    w.add_tensor_f32(name, {cols, rows}, values);
    return;
  }
  const size_t stride = row_bytes(type, cols);  // throws unless cols is a whole number of blocks
  std::vector<uint8_t> bytes(stride * static_cast<size_t>(rows));
  draws.for_runs(rows, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = begin; r < end; ++r) {
      draw_row(r, row.data());
      quantize_row(type, row.data(), bytes.data() + r * stride, cols);
    }
  });
  w.add_tensor(name, type, {cols, rows}, std::move(bytes));
}

void add_matrix(GgufWriter& w, const std::string& name, DType type, int64_t rows, int64_t cols, float scale,
                Draws& draws) {
  add_matrix_parts(w, name, type, {{rows, scale}}, cols, draws);
}

// Norm weights around 1 (never 0), so every channel contributes.
std::vector<float> norm_values(Draws& draws, int64_t n) {
  std::vector<float> v = draws.uniform(static_cast<size_t>(n), 0.5f);
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

  Draws draws(s.seed, s.writer_threads);
  const int64_t q_dim = int64_t{s.n_heads} * s.head_dim(), kv_dim = int64_t{s.n_kv_heads} * s.head_dim();
  // Projections scaled by 1/sqrt(fan-in) keep activations near unit size through every layer;
  // q and k a little larger so attention is peaked and positions (RoPE) matter.
  const float in_dim = 1.0f / std::sqrt(static_cast<float>(s.dim));
  const float in_q = 1.0f / std::sqrt(static_cast<float>(q_dim));
  const float in_ffn = 1.0f / std::sqrt(static_cast<float>(s.ffn_dim));
  add_matrix(w, "token_embd.weight", s.weight_dtype, s.vocab, s.dim, 1.0f, draws);
  for (int32_t l = 0; l < s.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    w.add_tensor_f32(p + "attn_norm.weight", {s.dim}, norm_values(draws, s.dim));
    if (s.architecture == "phi3") {
      add_matrix_parts(w, p + "attn_qkv.weight", s.weight_dtype,
                       {{q_dim, 3.0f * in_dim}, {kv_dim, 3.0f * in_dim}, {kv_dim, 1.7f * in_dim}}, s.dim, draws);
    } else {
      add_matrix(w, p + "attn_q.weight", s.weight_dtype, q_dim, s.dim, 3.0f * in_dim, draws);
      add_matrix(w, p + "attn_k.weight", s.weight_dtype, kv_dim, s.dim, 3.0f * in_dim, draws);
      add_matrix(w, p + "attn_v.weight", s.weight_dtype, kv_dim, s.dim, 1.7f * in_dim, draws);
    }
    add_matrix(w, p + "attn_output.weight", s.weight_dtype, s.dim, q_dim, 1.7f * in_q, draws);
    w.add_tensor_f32(p + "ffn_norm.weight", {s.dim}, norm_values(draws, s.dim));
    if (s.architecture == "phi3") {
      add_matrix_parts(w, p + "ffn_up.weight", s.weight_dtype, {{s.ffn_dim, 1.7f * in_dim}, {s.ffn_dim, 1.7f * in_dim}},
                       s.dim, draws);
    } else {
      add_matrix(w, p + "ffn_gate.weight", s.weight_dtype, s.ffn_dim, s.dim, 1.7f * in_dim, draws);
      add_matrix(w, p + "ffn_up.weight", s.weight_dtype, s.ffn_dim, s.dim, 1.7f * in_dim, draws);
    }
    add_matrix(w, p + "ffn_down.weight", s.weight_dtype, s.dim, s.ffn_dim, 1.7f * in_ffn, draws);
    // The architectures' own tensors come last, so a llama file's values do not depend on them.
    if (s.architecture == "qwen2") {
      w.add_tensor_f32(p + "attn_q.bias", {q_dim}, draws.uniform(static_cast<size_t>(q_dim), 0.5f));
      w.add_tensor_f32(p + "attn_k.bias", {kv_dim}, draws.uniform(static_cast<size_t>(kv_dim), 0.5f));
      w.add_tensor_f32(p + "attn_v.bias", {kv_dim}, draws.uniform(static_cast<size_t>(kv_dim), 0.5f));
    }
    if (s.architecture == "qwen3" || s.architecture == "gemma3") {
      w.add_tensor_f32(p + "attn_q_norm.weight", {s.head_dim()}, norm_values(draws, s.head_dim()));
      w.add_tensor_f32(p + "attn_k_norm.weight", {s.head_dim()}, norm_values(draws, s.head_dim()));
    }
    if (s.architecture == "gemma3") {
      w.add_tensor_f32(p + "post_attention_norm.weight", {s.dim}, norm_values(draws, s.dim));
      w.add_tensor_f32(p + "post_ffw_norm.weight", {s.dim}, norm_values(draws, s.dim));
    }
  }
  w.add_tensor_f32("output_norm.weight", {s.dim}, norm_values(draws, s.dim));
  if (!s.tied_output) add_matrix(w, "output.weight", s.weight_dtype, s.vocab, s.dim, 1.7f * in_dim, draws);
  if (s.rope_freq_factors) {
    // Llama 3.1's factors run from 1 (fast pairs) to 8 (slow pairs); random ones catch any mix-up.
    std::vector<float> factors = draws.uniform(static_cast<size_t>(s.effective_rope_dim() / 2), 3.5f);
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
