// LlamaModel::shape_only: a model with a config and matrix shapes but no file, weights or text.
#include <string>

#include "core/gguf/gguf_file.h"
#include "core/model/llama_model.h"

namespace inferscope {
namespace {

// Placeholder tokens: control tokens with no spelling, so each decodes to no text and none ends
// generation (no eos).
Vocab placeholder_vocab(int32_t size) {
  Vocab v;
  v.model = "llama";
  v.tokens.assign(static_cast<size_t>(size), std::string());
  v.scores.assign(static_cast<size_t>(size), 0.0f);
  v.types.assign(static_cast<size_t>(size), TokenType::CONTROL);
  return v;
}

}  // namespace

std::unique_ptr<LlamaModel> LlamaModel::shape_only(const LlamaConfig& config, const MatrixFormatFn& format_of) {
  std::unique_ptr<LlamaModel> m(new LlamaModel());
  m->config_ = config;
  const int32_t n_layers = config.n_layers;
  // Each distinct matrix gets its own address (a tied output shares the embedding's), so code that
  // tells matrices apart by their data pointer works; nothing ever reads through it.
  m->matrix_ids_.resize(2 + 7 * static_cast<size_t>(n_layers));
  size_t next_id = 0;
  auto matrix = [&](const std::string& name, int64_t rows, int64_t cols) {
    const DType type = format_of(name, cols);
    return MatrixRef{type, &m->matrix_ids_[next_id++], rows, cols, row_bytes(type, cols)};
  };
  LlamaWeights& w = m->weights_;
  w.token_embd = matrix("token_embd.weight", config.vocab_size, config.dim);
  for (int32_t i = 0; i < n_layers; ++i) {
    const std::string blk = "blk." + std::to_string(i) + ".";
    LlamaLayerWeights l;
    l.wq = matrix(blk + "attn_q.weight", config.q_dim(), config.dim);
    l.wk = matrix(blk + "attn_k.weight", config.kv_dim(), config.dim);
    l.wv = matrix(blk + "attn_v.weight", config.kv_dim(), config.dim);
    l.wo = matrix(blk + "attn_output.weight", config.dim, config.q_dim());
    l.w_gate = matrix(blk + "ffn_gate.weight", config.ffn_dim, config.dim);
    l.w_up = matrix(blk + "ffn_up.weight", config.ffn_dim, config.dim);
    l.w_down = matrix(blk + "ffn_down.weight", config.dim, config.ffn_dim);
    w.layers.push_back(l);
  }
  w.output = config.tied_output ? w.token_embd : matrix("output.weight", config.vocab_size, config.dim);
  m->tokenizer_ = Tokenizer::from_vocab(placeholder_vocab(config.vocab_size));
  return m;
}

}  // namespace inferscope
