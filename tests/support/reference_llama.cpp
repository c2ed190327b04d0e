#include "tests/support/reference_llama.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/gguf/gguf_file.h"
#include "kernels/cpu/quantize.h"

namespace inferscope::test {
namespace {

// y += x (the residual connections).
void add(std::vector<double>& y, const std::vector<double>& x) {
  for (size_t i = 0; i < y.size(); ++i) y[i] += x[i];
}

// x as the optimized code stores it in `type`: rounded to f32, then to `type` and back (F32: only the first).
std::vector<double> stored_as(DType type, const std::vector<double>& x) {
  std::vector<float> f(x.begin(), x.end());
  if (type != DType::F32) {
    std::vector<uint8_t> blocks(row_bytes(type, static_cast<int64_t>(f.size())));
    quantize_row(type, f.data(), blocks.data(), static_cast<int64_t>(f.size()));
    dequantize_row(type, blocks.data(), f.data(), static_cast<int64_t>(f.size()));
  }
  return {f.begin(), f.end()};
}

}  // namespace

ReferenceLlama::ReferenceLlama(const GgufFile& file, const SyntheticModelSpec& spec, const ReferenceOptions& options)
    : spec_(spec), options_(options) {
  const int64_t q_dim = int64_t{spec.n_heads} * spec.head_dim(), kv_dim = int64_t{spec.n_kv_heads} * spec.head_dim();
  token_embd_ = load_matrix(file, "token_embd.weight", spec.vocab, spec.dim);
  for (int32_t l = 0; l < spec.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    Layer layer;
    layer.attn_norm = load_vector(file, p + "attn_norm.weight", spec.dim);
    if (spec.architecture == "phi3") {
      // one tensor of Q, K and V rows
      const Matrix qkv = load_matrix(file, p + "attn_qkv.weight", q_dim + 2 * kv_dim, spec.dim);
      layer.wq = rows_of(qkv, 0, q_dim);
      layer.wk = rows_of(qkv, q_dim, kv_dim);
      layer.wv = rows_of(qkv, q_dim + kv_dim, kv_dim);
    } else {
      layer.wq = load_matrix(file, p + "attn_q.weight", q_dim, spec.dim);
      layer.wk = load_matrix(file, p + "attn_k.weight", kv_dim, spec.dim);
      layer.wv = load_matrix(file, p + "attn_v.weight", kv_dim, spec.dim);
    }
    layer.wo = load_matrix(file, p + "attn_output.weight", spec.dim, q_dim);
    layer.ffn_norm = load_vector(file, p + "ffn_norm.weight", spec.dim);
    if (spec.architecture == "phi3") {
      // one tensor of gate rows, then up rows
      const Matrix gate_up = load_matrix(file, p + "ffn_up.weight", 2 * int64_t{spec.ffn_dim}, spec.dim);
      const bool swapped = options.mutation == ReferenceMutation::FusedGateUpSwapped;
      layer.w_gate = rows_of(gate_up, swapped ? spec.ffn_dim : 0, spec.ffn_dim);
      layer.w_up = rows_of(gate_up, swapped ? 0 : spec.ffn_dim, spec.ffn_dim);
    } else {
      layer.w_gate = load_matrix(file, p + "ffn_gate.weight", spec.ffn_dim, spec.dim);
      layer.w_up = load_matrix(file, p + "ffn_up.weight", spec.ffn_dim, spec.dim);
    }
    layer.w_down = load_matrix(file, p + "ffn_down.weight", spec.dim, spec.ffn_dim);
    const bool parts = options.mutation != ReferenceMutation::NoArchitectureParts;
    if (spec.architecture == "qwen2" && parts) {
      layer.bq = load_vector(file, p + "attn_q.bias", q_dim);
      layer.bk = load_vector(file, p + "attn_k.bias", kv_dim);
      layer.bv = load_vector(file, p + "attn_v.bias", kv_dim);
    }
    if ((spec.architecture == "qwen3" || spec.architecture == "gemma3") && parts) {
      layer.q_norm = load_vector(file, p + "attn_q_norm.weight", spec.head_dim());
      layer.k_norm = load_vector(file, p + "attn_k_norm.weight", spec.head_dim());
    }
    if (spec.architecture == "gemma3" && parts) {
      layer.attn_post_norm = load_vector(file, p + "post_attention_norm.weight", spec.dim);
      layer.ffn_post_norm = load_vector(file, p + "post_ffw_norm.weight", spec.dim);
    }
    layers_.push_back(std::move(layer));
  }
  if (spec.rope_freq_factors && options.mutation != ReferenceMutation::NoArchitectureParts) {
    rope_factors_ = load_vector(file, "rope_freqs.weight", spec.effective_rope_dim() / 2);
  }
  output_norm_ = load_vector(file, "output_norm.weight", spec.dim);
  output_ = spec.tied_output ? token_embd_ : load_matrix(file, "output.weight", spec.vocab, spec.dim);
}

ReferenceLlama::Matrix ReferenceLlama::load_matrix(const GgufFile& file, const std::string& name, int64_t rows,
                                                   int64_t cols) {
  const GgufTensorInfo& t = file.tensor(name);
  if (t.dims.size() != 2 || t.dims[0] != cols || t.dims[1] != rows) {
    throw std::runtime_error("reference: tensor " + name + " has an unexpected shape");
  }
  Matrix m{rows, cols, std::vector<double>(static_cast<size_t>(rows * cols))};
  std::vector<float> row(static_cast<size_t>(cols));
  const size_t stride = row_bytes(t.type, cols);
  for (int64_t r = 0; r < rows; ++r) {
    // the same stored (possibly quantized) values the optimized kernels read, widened to double
    dequantize_row(t.type, t.data + r * stride, row.data(), cols);
    for (int64_t c = 0; c < cols; ++c) m.values[static_cast<size_t>(r * cols + c)] = row[static_cast<size_t>(c)];
  }
  return m;
}

ReferenceLlama::Matrix ReferenceLlama::rows_of(const Matrix& m, int64_t first, int64_t rows) {
  return Matrix{rows, m.cols,
                std::vector<double>(m.values.begin() + first * m.cols, m.values.begin() + (first + rows) * m.cols)};
}

std::vector<double> ReferenceLlama::load_vector(const GgufFile& file, const std::string& name, int64_t n) {
  const GgufTensorInfo& t = file.tensor(name);
  if (t.n_elements() != n) throw std::runtime_error("reference: tensor " + name + " has an unexpected size");
  std::vector<float> v(static_cast<size_t>(n));
  dequantize_row(t.type, t.data, v.data(), n);
  return {v.begin(), v.end()};
}

bool ReferenceLlama::windowed_layer(int32_t layer) const {
  if (spec_.sliding_window == 0) return false;
  if (spec_.architecture != "gemma3") return true;
  const int32_t n = spec_.swa_pattern > 0 ? spec_.swa_pattern : 6;
  return layer % n < n - 1;
}

bool ReferenceLlama::local_layer(int32_t layer) const {
  if (options_.mutation == ReferenceMutation::LocalRopeIgnored) return false;
  return spec_.architecture == "gemma3" && windowed_layer(layer);
}

void ReferenceLlama::rope(double* head, int32_t pos, int32_t layer) const {
  const int32_t rope_dim = spec_.effective_rope_dim();
  // local layers: their own base (10000 unless the file says), no scaling
  const bool local = local_layer(layer);
  const double base = local ? (spec_.rope_base_local > 0.0f ? spec_.rope_base_local : 10000.0) : spec_.rope_base;
  const double scale = !local && spec_.rope_linear_factor > 0.0f ? 1.0 / spec_.rope_linear_factor : 1.0;
  const double yarn = !local ? spec_.rope_yarn_factor : 0.0;
  const double magnitude = yarn > 1.0 ? 1.0 + 0.1 * std::log(yarn) : 1.0;  // YaRN's attention factor on cos and sin
  for (int32_t i = 0; 2 * i < rope_dim; ++i) {
    double theta = pos * scale * std::pow(base, -2.0 * i / rope_dim);
    if (!rope_factors_.empty()) theta /= rope_factors_[static_cast<size_t>(i)];
    if (yarn > 0.0) theta *= yarn_frequency_factor(i, base, yarn);
    // the pair rotated together: adjacent (2i, 2i+1) for llama, (i, i + rope_dim/2) for NEOX
    // architectures; the mutation swaps them
    const bool split = neox() != (options_.mutation == ReferenceMutation::RopeOtherPairing);
    double& x0 = head[split ? i : 2 * i];
    double& x1 = head[split ? i + rope_dim / 2 : 2 * i + 1];
    const double a = x0, b = x1;
    x0 = magnitude * (a * std::cos(theta) - b * std::sin(theta));
    x1 = magnitude * (a * std::sin(theta) + b * std::cos(theta));
  }
}

double ReferenceLlama::yarn_frequency_factor(int32_t pair, double base, double factor) const {
  // YaRN (Peng et al. 2023): a pair whose wavelength 2 pi base^(2 pair / d) turns more than 32 times
  // within the trained context keeps its frequency, one turning less than once is interpolated
  // (frequency / factor), and the pairs between blend the two linearly in the pair index.
  const int32_t d = spec_.effective_rope_dim();
  const double trained = spec_.rope_yarn_orig_ctx > 0 ? spec_.rope_yarn_orig_ctx : spec_.context_length;
  const auto pair_turning = [&](double turns) {
    return d * std::log(trained / (turns * 2.0 * std::acos(-1.0))) / (2.0 * std::log(base));
  };
  const double low = std::max(0.0, std::floor(pair_turning(32.0)));
  const double high = std::min(d - 1.0, std::ceil(pair_turning(1.0)));
  const double keep = 1.0 - std::clamp((pair - low) / std::max(high - low, 0.001), 0.0, 1.0);
  return keep + (1.0 - keep) / factor;
}

std::vector<double> ReferenceLlama::matvec(const Matrix& w, const std::vector<double>& x) const {
  // round the input as the optimized matmul does: to f32, then to the 8-bit activation blocks
  const std::vector<double> in = options_.activation_type == DType::F32 ? x : stored_as(options_.activation_type, x);
  // y = W x
  std::vector<double> y(static_cast<size_t>(w.rows), 0.0);
  for (int64_t r = 0; r < w.rows; ++r) {
    const double* row = w.values.data() + r * w.cols;
    double sum = 0.0;
    for (int64_t c = 0; c < w.cols; ++c) sum += row[c] * in[static_cast<size_t>(c)];
    y[static_cast<size_t>(r)] = sum;
  }
  return y;
}

std::vector<double> ReferenceLlama::rmsnorm(const std::vector<double>& x, const std::vector<double>& weight) const {
  double sum_sq = 0.0;
  for (double v : x) sum_sq += v * v;
  const double inv = 1.0 / std::sqrt(sum_sq / static_cast<double>(x.size()) + spec_.rms_eps);
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) out[i] = x[i] * inv * weight[i];
  return out;
}

void ReferenceLlama::rmsnorm_heads(std::vector<double>& x, const std::vector<double>& weight) const {
  const size_t hd = weight.size();
  for (size_t h = 0; h * hd < x.size(); ++h) {
    const std::vector<double> head(x.begin() + static_cast<ptrdiff_t>(h * hd), x.begin() + static_cast<ptrdiff_t>((h + 1) * hd));
    const std::vector<double> normed = rmsnorm(head, weight);
    std::copy(normed.begin(), normed.end(), x.begin() + static_cast<ptrdiff_t>(h * hd));
  }
}

std::vector<double> ReferenceLlama::attention(const Layer& layer, const std::vector<double>& q, bool windowed) const {
  const int32_t hd = spec_.head_dim(), n = length_ + 1;
  // the window: positions first .. n-1, the newest sliding_window of them
  const bool masked = windowed && options_.mutation != ReferenceMutation::WindowIgnored;
  const int32_t first = masked ? std::max(0, n - spec_.sliding_window) : 0;
  const size_t kv_dim = static_cast<size_t>(spec_.n_kv_heads) * hd;
  std::vector<double> out(q.size(), 0.0), scores(static_cast<size_t>(n));
  for (int32_t h = 0; h < spec_.n_heads; ++h) {
    const int32_t kv_head = options_.mutation == ReferenceMutation::GqaModulo ? h % spec_.n_kv_heads
                                                                      : h / (spec_.n_heads / spec_.n_kv_heads);
    const double* qh = q.data() + static_cast<size_t>(h) * hd;
    // scores against every position so far in the window (causal: nothing later exists yet), then softmax
    double max_score = -INFINITY;
    for (int32_t t = first; t < n; ++t) {
      const double* k = layer.keys.data() + t * kv_dim + static_cast<size_t>(kv_head) * hd;
      double dot = 0.0;
      for (int32_t d = 0; d < hd; ++d) dot += qh[d] * k[d];
      scores[static_cast<size_t>(t)] = dot / std::sqrt(static_cast<double>(hd));
      max_score = std::max(max_score, scores[static_cast<size_t>(t)]);
    }
    double sum = 0.0;
    for (int32_t t = first; t < n; ++t) {
      double& s = scores[static_cast<size_t>(t)];
      sum += (s = std::exp(s - max_score));
    }
    double* oh = out.data() + static_cast<size_t>(h) * hd;
    for (int32_t t = first; t < n; ++t) {
      const double* v = layer.values.data() + t * kv_dim + static_cast<size_t>(kv_head) * hd;
      for (int32_t d = 0; d < hd; ++d) oh[d] += scores[static_cast<size_t>(t)] / sum * v[d];
    }
  }
  return out;
}

std::vector<double> ReferenceLlama::step(int32_t token) {
  if (token < 0 || token >= spec_.vocab) throw std::out_of_range("reference: token outside the vocabulary");
  const int32_t pos = length_, hd = spec_.head_dim();
  // embedding
  std::vector<double> x(token_embd_.values.begin() + int64_t{token} * spec_.dim,
                        token_embd_.values.begin() + int64_t{token + 1} * spec_.dim);
  const bool gemma = spec_.architecture == "gemma3";
  if (gemma && options_.mutation != ReferenceMutation::NoArchitectureParts) {
    for (double& v : x) v *= std::sqrt(static_cast<double>(spec_.dim));
  }
  for (int32_t l = 0; l < spec_.n_layers; ++l) {
    Layer& layer = layers_[static_cast<size_t>(l)];
    // attention block: norm, projections, RoPE on q and k, K/V history, attention, output, residual
    const std::vector<double> xb = rmsnorm(x, layer.attn_norm);
    std::vector<double> q = matvec(layer.wq, xb), k = matvec(layer.wk, xb);
    std::vector<double> v = matvec(layer.wv, xb);
    if (!layer.bq.empty()) {
      add(q, layer.bq);
      add(k, layer.bk);
      add(v, layer.bv);
    }
    if (!layer.q_norm.empty()) {
      rmsnorm_heads(q, layer.q_norm);
      rmsnorm_heads(k, layer.k_norm);
    }
    for (int32_t h = 0; h < spec_.n_heads; ++h) rope(q.data() + static_cast<size_t>(h) * hd, pos, l);
    for (int32_t h = 0; h < spec_.n_kv_heads; ++h) rope(k.data() + static_cast<size_t>(h) * hd, pos, l);
    if (options_.kv_type != DType::F32) {
      // the history holds what the cache stores (q8 blocks of 32 stay inside one head: head_dim % 32 == 0)
      k = stored_as(options_.kv_type, k);
      v = stored_as(options_.kv_type, v);
    }
    layer.keys.insert(layer.keys.end(), k.begin(), k.end());
    layer.values.insert(layer.values.end(), v.begin(), v.end());
    std::vector<double> attended = matvec(layer.wo, attention(layer, q, windowed_layer(l)));
    if (!layer.attn_post_norm.empty()) attended = rmsnorm(attended, layer.attn_post_norm);
    add(x, attended);
    // ffn block: norm, w_down(act(w_gate x) * w_up x) with SiLU, or gemma3's tanh GELU, residual
    const std::vector<double> xf = rmsnorm(x, layer.ffn_norm);
    std::vector<double> gate = matvec(layer.w_gate, xf);
    const std::vector<double> up = matvec(layer.w_up, xf);
    for (size_t i = 0; i < gate.size(); ++i) {
      const double g = gate[i];
      const double act = gemma ? 0.5 * g * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g)))
                               : g / (1.0 + std::exp(-g));
      gate[i] = act * up[i];
    }
    std::vector<double> ffn = matvec(layer.w_down, gate);
    if (!layer.ffn_post_norm.empty()) ffn = rmsnorm(ffn, layer.ffn_post_norm);
    add(x, ffn);
  }
  ++length_;
  // final norm and classifier (soft-capped where the file asks)
  std::vector<double> logits = matvec(output_, rmsnorm(x, output_norm_));
  if (spec_.logit_softcap > 0.0f) {
    for (double& v : logits) v = spec_.logit_softcap * std::tanh(v / spec_.logit_softcap);
  }
  return logits;
}

}  // namespace inferscope::test
