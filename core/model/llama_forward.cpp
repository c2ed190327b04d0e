#include "core/model/llama_forward.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/attention/attention.h"
#include "core/model/llama_model.h"
#include "kernels/cpu/matmul/matmul.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/matmul/packed_rows.h"
#include "kernels/cpu/quantize.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {
namespace {

float* row(std::vector<float>& m, int64_t r, int64_t width) { return m.data() + r * width; }

// out[t] = rmsnorm(in[t]) * weight, for each of n rows.
void rmsnorm_rows(float* out, const float* in, const float* weight, int64_t n, int64_t dim, float eps) {
  for (int64_t t = 0; t < n; ++t) rmsnorm(out + t * dim, in + t * dim, weight, dim, eps);
}

// x[t] += bias for each of n rows of width (qwen2's Q, K and V biases); nothing when bias is null.
void add_bias_rows(float* x, const float* bias, int64_t n, int64_t width) {
  if (bias == nullptr) return;
  for (int64_t t = 0; t < n; ++t) add_inplace(x + t * width, bias, width);
}

}  // namespace

LlamaForward::LlamaForward(const LlamaModel& model, const ForwardOptions& options)
    : LlamaForward(model, model.weights(), options) {}

LlamaForward::LlamaForward(const LlamaModel& model, const LlamaWeights& weights, const ForwardOptions& options)
    : model_(model), weights_(&weights), matmul_(options.matmul), recipe_(forward_recipe(model.config())) {
  if (weights.layers.size() != static_cast<size_t>(model.config().n_layers)) {
    throw std::invalid_argument("forward: the weights have " + std::to_string(weights.layers.size()) +
                                " layers, the model " + std::to_string(model.config().n_layers));
  }
  pack_rows(weights);
}

void LlamaForward::pack_rows(const LlamaWeights& weights) {
  packed_weights_ = weights;
  // the norm pointers still point into the caller's owned_norms, which outlive this pass
  packed_weights_.owned_norms.clear();
  std::vector<MatrixRef*> to_pack;
  for (LlamaLayerWeights& l : packed_weights_.layers)
    for (MatrixRef* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down})
      if (uses_packed_rows(*m, matmul_)) to_pack.push_back(m);
  if (uses_packed_rows(packed_weights_.output, matmul_)) to_pack.push_back(&packed_weights_.output);
  if (to_pack.empty()) return;
  // One arena for them all, so that a small model's matrices share 2 MiB pages too; each 64-byte aligned.
  constexpr size_t kAlign = 64;
  std::vector<size_t> offsets;
  size_t total = 0;
  for (const MatrixRef* m : to_pack) {
    offsets.push_back(total);
    total += (packed_rows_bytes(*m) + kAlign - 1) / kAlign * kAlign;
  }
  packed_rows_ = LargePageBytes(total);
  for (size_t i = 0; i < to_pack.size(); ++i) {
    pack_rows_into(*to_pack[i], packed_rows_.data() + offsets[i]);
    to_pack[i]->packed = packed_rows_.data() + offsets[i];
  }
  weights_ = &packed_weights_;
}

ForwardStats LlamaForward::run(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention, ThreadPool& pool,
                               std::vector<float>& logits, int32_t layers) {
  const LlamaConfig& c = model_.config();
  const LlamaWeights& w = *weights_;
  const int64_t dim = c.dim, q_dim = c.q_dim(), kv_dim = c.kv_dim(), hd = c.head_dim;

  const BatchSize size = check_batch(batch, kv, c.vocab_size);
  const int64_t n_tok = size.tokens, n_logits = size.logits_rows;
  x_.resize(n_tok * dim);
  xb_.resize(n_tok * dim);
  q_.resize(n_tok * q_dim);
  k_.resize(n_tok * kv_dim);
  v_.resize(n_tok * kv_dim);
  att_.resize(n_tok * q_dim);
  gate_.resize(n_tok * c.ffn_dim);
  up_.resize(n_tok * c.ffn_dim);

  // token embedding: x[t] = token_embd[token]
  int64_t t = 0;
  for (const BatchSeq& s : batch) {
    for (TokenId id : s.tokens) {
      const auto* src = static_cast<const uint8_t*>(w.token_embd.data) + w.token_embd.row_stride * id;
      dequantize_row(w.token_embd.type, src, row(x_, t, dim), dim);
      ++t;
    }
  }
  for (ForwardStep step : recipe_.before) {
    // gemma3: x *= sqrt(dim)
    if (step == ForwardStep::ScaledEmbedding) scale_inplace(x_.data(), std::sqrt(static_cast<float>(dim)), n_tok * dim);
  }

  // RoPE angles of each token's position, shared by every layer (gemma3's local layers have their own)
  const int64_t half_rope = c.rope_dim / 2;
  const bool has_local = !c.local_layers.empty();
  rope_cos_.resize(n_tok * half_rope);
  rope_sin_.resize(n_tok * half_rope);
  rope_cos_local_.resize(has_local ? n_tok * half_rope : 0);
  rope_sin_local_.resize(has_local ? n_tok * half_rope : 0);
  t = 0;
  for (const BatchSeq& s : batch) {
    for (size_t i = 0; i < s.tokens.size(); ++i, ++t) {
      const int32_t pos = s.pos0 + static_cast<int32_t>(i);
      rope_cos_sin(row(rope_cos_, t, half_rope), row(rope_sin_, t, half_rope), c.rope_dim, pos, c.rope_freq_base,
                   c.rope_freq_scale, w.rope_freq_factors, c.rope_yarn ? &*c.rope_yarn : nullptr);
      if (has_local) {
        rope_cos_sin(row(rope_cos_local_, t, half_rope), row(rope_sin_local_, t, half_rope), c.rope_dim, pos,
                     c.rope_freq_base_local, 1.0f);
      }
    }
  }

  AttentionShape shape{c.n_heads, c.n_kv_heads, c.head_dim};
  std::vector<AttentionSeq> att_seqs(batch.size());
  ForwardStats stats;
  // Runs a call, adding its wall time to `total` (the step's matmul or attention seconds).
  const auto timed = [](double& total, auto&& call) {
    const auto start = std::chrono::steady_clock::now();
    call();
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (layers < 0 || layers > c.n_layers) {
    throw std::invalid_argument("forward: cannot run " + std::to_string(layers) + " of " + std::to_string(c.n_layers) +
                                " layers");
  }
  const int32_t n_layers = layers > 0 ? layers : c.n_layers;
  for (int32_t l = 0; l < n_layers; ++l) {
    const LlamaLayerWeights& lw = w.layers[l];
    const bool local = has_local && c.local_layers[static_cast<size_t>(l)];
    std::vector<float>& layer_cos = local ? rope_cos_local_ : rope_cos_;
    std::vector<float>& layer_sin = local ? rope_sin_local_ : rope_sin_;
    // the layer's steps, as forward_recipe() lists them for this model
    for (ForwardStep step : recipe_.layer) {
      switch (step) {
        case ForwardStep::AttentionNorm:
          rmsnorm_rows(xb_.data(), x_.data(), lw.attn_norm, n_tok, dim, c.rms_eps);
          break;
        case ForwardStep::QkvProjection: {
          // q, k, v projections for every token of the step at once, as one fused job
          const MatmulTarget qkv[] = {{lw.wq, q_.data()}, {lw.wk, k_.data()}, {lw.wv, v_.data()}};
          timed(stats.matmul_seconds, [&] { matmul_fused(qkv, xb_.data(), n_tok, pool, matmul_); });
          break;
        }
        case ForwardStep::QkvBias:
          add_bias_rows(q_.data(), lw.bq, n_tok, q_dim);
          add_bias_rows(k_.data(), lw.bk, n_tok, kv_dim);
          add_bias_rows(v_.data(), lw.bv, n_tok, kv_dim);
          break;
        case ForwardStep::QkNorm:
          // every q and k head RMS-normalised on its own before RoPE
          rmsnorm_rows(q_.data(), q_.data(), lw.q_norm, n_tok * c.n_heads, hd, c.rms_eps);
          rmsnorm_rows(k_.data(), k_.data(), lw.k_norm, n_tok * c.n_kv_heads, hd, c.rms_eps);
          break;
        case ForwardStep::Rope:
        case ForwardStep::LocalGlobalRope:
          // RoPE on q and k at each token's position (a local layer's angles are its own)
          for (t = 0; t < n_tok; ++t) {
            const float* cos = row(layer_cos, t, half_rope);
            const float* sin = row(layer_sin, t, half_rope);
            rope_apply(row(q_, t, q_dim), c.n_heads, hd, c.rope_dim, cos, sin, c.traits.rope_pairing);
            rope_apply(row(k_, t, kv_dim), c.n_kv_heads, hd, c.rope_dim, cos, sin, c.traits.rope_pairing);
          }
          break;
        case ForwardStep::QueryScale:
          scale_inplace(q_.data(), c.query_scale, n_tok * q_dim);
          break;
        case ForwardStep::KvStore:
          t = 0;
          for (const BatchSeq& s : batch) {
            for (size_t i = 0; i < s.tokens.size(); ++i, ++t) {
              kv.store(l, s.seq, s.pos0 + static_cast<int32_t>(i), row(k_, t, kv_dim), row(v_, t, kv_dim));
            }
          }
          break;
        case ForwardStep::Attention: {
          // each sequence's queries over its cached context (a windowed layer's: the last window)
          shape.window = c.layer_window(l);
          t = 0;
          for (size_t si = 0; si < batch.size(); ++si) {
            const BatchSeq& s = batch[si];
            att_seqs[si] = AttentionSeq{row(q_, t, q_dim), row(att_, t, q_dim), static_cast<int32_t>(s.tokens.size()),
                                        s.pos0, kv.view(l, s.seq)};
            t += static_cast<int64_t>(s.tokens.size());
          }
          stats.attention_scratch_bytes = std::max(stats.attention_scratch_bytes, attention.scratch_bytes(att_seqs, shape));
          timed(stats.attention_seconds, [&] { attention.forward(att_seqs, shape, pool); });
          break;
        }
        case ForwardStep::OutputProjection:
          timed(stats.matmul_seconds, [&] { matmul(lw.wo, att_.data(), n_tok, xb_.data(), pool, matmul_); });
          break;
        case ForwardStep::AttentionPostNorm:
          rmsnorm_rows(xb_.data(), xb_.data(), lw.attn_post_norm, n_tok, dim, c.rms_eps);
          break;
        case ForwardStep::AttentionResidual:
        case ForwardStep::FfnResidual:
          add_inplace(x_.data(), xb_.data(), n_tok * dim);
          break;
        case ForwardStep::FfnNorm:
          rmsnorm_rows(xb_.data(), x_.data(), lw.ffn_norm, n_tok, dim, c.rms_eps);
          break;
        case ForwardStep::GateUpProjection: {
          const MatmulTarget gate_up[] = {{lw.w_gate, gate_.data()}, {lw.w_up, up_.data()}};
          timed(stats.matmul_seconds, [&] { matmul_fused(gate_up, xb_.data(), n_tok, pool, matmul_); });
          break;
        }
        case ForwardStep::SwiGlu:
          swiglu(gate_.data(), up_.data(), n_tok * c.ffn_dim);
          break;
        case ForwardStep::GeluGate:
          geglu(gate_.data(), up_.data(), n_tok * c.ffn_dim);
          break;
        case ForwardStep::DownProjection:
          timed(stats.matmul_seconds, [&] { matmul(lw.w_down, gate_.data(), n_tok, xb_.data(), pool, matmul_); });
          break;
        case ForwardStep::FfnPostNorm:
          rmsnorm_rows(xb_.data(), xb_.data(), lw.ffn_post_norm, n_tok, dim, c.rms_eps);
          break;
        case ForwardStep::ScaledEmbedding:
        case ForwardStep::LogitSoftcap:
          throw std::logic_error("forward: " + std::string(forward_step_name(step)) + " is not a layer step");
      }
    }
  }

  // final rmsnorm of the rows that need logits, then the classifier
  last_.resize(n_logits * dim);
  int64_t r = 0;
  t = 0;
  for (const BatchSeq& s : batch) {
    const int64_t n = static_cast<int64_t>(s.tokens.size());
    for (int64_t i = first_logits_token(s); i < n; ++i) rmsnorm(row(last_, r++, dim), row(x_, t + i, dim), w.output_norm, dim, c.rms_eps);
    t += n;
  }
  logits.resize(n_logits * c.vocab_size);
  timed(stats.matmul_seconds, [&] { matmul(w.output, last_.data(), n_logits, logits.data(), pool, matmul_); });
  for (ForwardStep step : recipe_.after) {
    // soft cap: logits = cap * tanh(logits / cap), where the file asks for it
    if (step == ForwardStep::LogitSoftcap) {
      for (float& v : logits) v = c.final_logit_softcap * std::tanh(v / c.final_logit_softcap);
    }
  }
  return stats;
}

}  // namespace inferscope
