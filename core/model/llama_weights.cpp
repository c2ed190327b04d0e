#include "core/model/llama_weights.h"

#include <cmath>
#include <string>

#include "core/gguf/gguf_file.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {
namespace {

std::string shape_string(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// A 2-D weight with ggml dims {cols, rows}: rows of `cols` contiguous elements.
MatrixRef matrix(const GgufFile& f, const std::string& name, int64_t rows, int64_t cols) {
  const GgufTensorInfo& t = f.tensor(name);
  if (t.dims.size() != 2 || t.dims[0] != cols || t.dims[1] != rows) {
    throw GgufError(f.path() + ": tensor '" + name + "': shape " + shape_string(t.dims) + ", expected [" +
                    std::to_string(cols) + ", " + std::to_string(rows) + "]");
  }
  if (!dtype_info(t.type).can_load) {
    throw GgufError(f.path() + ": tensor '" + name + "': type " + std::string(dtype_name(t.type)) +
                    " is not supported");
  }
  return MatrixRef{t.type, t.data, rows, cols, row_bytes(t.type, cols)};
}

// Rows [first, first + rows) of `m`: a view into one part of a fused tensor (phi3's attn_qkv, ffn_up).
MatrixRef row_slice(const MatrixRef& m, int64_t first, int64_t rows) {
  return MatrixRef{m.type, static_cast<const uint8_t*>(m.data) + static_cast<size_t>(first) * m.row_stride, rows, m.cols,
                   m.row_stride};
}

// A norm vector; converted to f32 (into `owned`) when the file stores it otherwise.
const float* vector_f32(const GgufFile& f, const std::string& name, int64_t n,
                        std::vector<std::vector<float>>& owned) {
  const GgufTensorInfo& t = f.tensor(name);
  if (t.n_elements() != n) {
    throw GgufError(f.path() + ": tensor '" + name + "': shape " + shape_string(t.dims) + ", expected [" +
                    std::to_string(n) + "]");
  }
  if (t.type == DType::F32) return reinterpret_cast<const float*>(t.data);
  if (!dtype_info(t.type).can_load || n % dtype_info(t.type).block_size != 0) {
    throw GgufError(f.path() + ": tensor '" + name + "': type " + std::string(dtype_name(t.type)) +
                    " is not supported for a norm vector");
  }
  owned.emplace_back(static_cast<size_t>(n));
  dequantize_row(t.type, t.data, owned.back().data(), n);
  return owned.back().data();
}

// A tensor the architecture does not use must not be there: ignoring it would run another model.
void refuse_unused(const GgufFile& f, const std::string& name, const LlamaConfig& c) {
  if (f.find_tensor(name) != nullptr) {
    throw GgufError(f.path() + ": tensor '" + name + "' is not part of the " + c.architecture +
                    " architecture (refused rather than ignored)");
  }
}

// Optional per-layer vectors: present exactly when the architecture has them.
const float* arch_vector(const GgufFile& f, const std::string& name, int64_t n, bool used, const LlamaConfig& c,
                         std::vector<std::vector<float>>& owned) {
  if (!used) {
    refuse_unused(f, name, c);
    return nullptr;
  }
  return vector_f32(f, name, n, owned);
}

}  // namespace

size_t LlamaWeights::matrix_bytes() const {
  auto bytes = [](const MatrixRef& m) { return m.row_stride * static_cast<size_t>(m.rows); };
  size_t total = bytes(token_embd);
  for (const auto& l : layers) {
    total += bytes(l.wq) + bytes(l.wk) + bytes(l.wv) + bytes(l.wo) + bytes(l.w_gate) + bytes(l.w_up) + bytes(l.w_down);
  }
  if (output.data != token_embd.data) total += bytes(output);
  return total;
}

LlamaWeights LlamaWeights::from_gguf(const GgufFile& f, const LlamaConfig& c) {
  LlamaWeights w;
  const int64_t q_dim = c.q_dim();
  w.token_embd = matrix(f, "token_embd.weight", c.vocab_size, c.dim);
  for (int32_t i = 0; i < c.n_layers; ++i) {
    const std::string p = "blk." + std::to_string(i) + ".";
    LlamaLayerWeights l;
    l.attn_norm = vector_f32(f, p + "attn_norm.weight", c.dim, w.owned_norms);
    if (c.traits.fused_qkv && f.find_tensor(p + "attn_qkv.weight") != nullptr) {
      // Q, K and V rows one after another in one tensor
      const MatrixRef qkv = matrix(f, p + "attn_qkv.weight", q_dim + 2 * c.kv_dim(), c.dim);
      l.wq = row_slice(qkv, 0, q_dim);
      l.wk = row_slice(qkv, q_dim, c.kv_dim());
      l.wv = row_slice(qkv, q_dim + c.kv_dim(), c.kv_dim());
    } else {
      refuse_unused(f, p + "attn_qkv.weight", c);
      l.wq = matrix(f, p + "attn_q.weight", q_dim, c.dim);
      l.wk = matrix(f, p + "attn_k.weight", c.kv_dim(), c.dim);
      l.wv = matrix(f, p + "attn_v.weight", c.kv_dim(), c.dim);
    }
    l.wo = matrix(f, p + "attn_output.weight", c.dim, q_dim);
    l.ffn_norm = vector_f32(f, p + "ffn_norm.weight", c.dim, w.owned_norms);
    if (c.traits.fused_gate_up) {
      // gate rows, then up rows, in one tensor
      refuse_unused(f, p + "ffn_gate.weight", c);
      const MatrixRef gate_up = matrix(f, p + "ffn_up.weight", 2 * int64_t{c.ffn_dim}, c.dim);
      l.w_gate = row_slice(gate_up, 0, c.ffn_dim);
      l.w_up = row_slice(gate_up, c.ffn_dim, c.ffn_dim);
    } else {
      l.w_gate = matrix(f, p + "ffn_gate.weight", c.ffn_dim, c.dim);
      l.w_up = matrix(f, p + "ffn_up.weight", c.ffn_dim, c.dim);
    }
    l.w_down = matrix(f, p + "ffn_down.weight", c.dim, c.ffn_dim);
    const bool bias = c.traits.qkv_bias, qk_norm = c.traits.qk_norm;
    l.bq = arch_vector(f, p + "attn_q.bias", q_dim, bias, c, w.owned_norms);
    l.bk = arch_vector(f, p + "attn_k.bias", c.kv_dim(), bias, c, w.owned_norms);
    l.bv = arch_vector(f, p + "attn_v.bias", c.kv_dim(), bias, c, w.owned_norms);
    l.q_norm = arch_vector(f, p + "attn_q_norm.weight", c.head_dim, qk_norm, c, w.owned_norms);
    l.k_norm = arch_vector(f, p + "attn_k_norm.weight", c.head_dim, qk_norm, c, w.owned_norms);
    const bool post = c.traits.post_norms;
    l.attn_post_norm = arch_vector(f, p + "post_attention_norm.weight", c.dim, post, c, w.owned_norms);
    l.ffn_post_norm = arch_vector(f, p + "post_ffw_norm.weight", c.dim, post, c, w.owned_norms);
    w.layers.push_back(l);
  }
  if (c.rope_freq_factors) {
    w.rope_freq_factors = vector_f32(f, "rope_freqs.weight", c.rope_dim / 2, w.owned_norms);
    for (int32_t i = 0; i < c.rope_dim / 2; ++i) {
      const float factor = w.rope_freq_factors[i];
      if (!(factor > 0.0f) || !std::isfinite(factor)) {
        throw GgufError(f.path() + ": tensor 'rope_freqs.weight': factor " + std::to_string(i) + " is " +
                        std::to_string(factor) + ", not a positive number");
      }
    }
  }
  w.output_norm = vector_f32(f, "output_norm.weight", c.dim, w.owned_norms);
  w.output = c.tied_output ? w.token_embd : matrix(f, "output.weight", c.vocab_size, c.dim);
  return w;
}

}  // namespace inferscope
