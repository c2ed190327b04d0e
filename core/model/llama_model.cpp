#include "core/model/llama_model.h"

#include <stdexcept>

#include "core/gguf/gguf_file.h"

namespace inferscope {

LlamaModel::~LlamaModel() = default;

std::unique_ptr<LlamaModel> LlamaModel::load(const std::string& path, const ModelLoadOptions& options) {
  std::unique_ptr<LlamaModel> m(new LlamaModel());
  m->file_ = GgufFile::open(path);
  m->config_ = LlamaConfig::from_gguf(*m->file_);
  m->weights_ = LlamaWeights::from_gguf(*m->file_, m->config_);
  m->tokenizer_ = Tokenizer::from_gguf(*m->file_);
  if (m->tokenizer_->vocab().size() != m->config_.vocab_size) {
    throw GgufError(path + ": tokenizer.ggml.tokens: " + std::to_string(m->tokenizer_->vocab().size()) +
                    " tokens, but token_embd.weight has " + std::to_string(m->config_.vocab_size) + " rows");
  }
  m->chat_template_ = ChatTemplate::detect(m->file_->get_string_or("tokenizer.chat_template", ""),
                                           m->tokenizer_->vocab(), &m->chat_template_warning_);
  if (!options.chat_template_override.empty()) {
    const auto family = chat_family_from_name(options.chat_template_override);
    if (!family) throw std::invalid_argument("unknown chat template '" + options.chat_template_override + "'");
    // Forcing the family the file already has keeps what detection found (its default system prompt).
    if (*family != m->chat_template_.family) m->chat_template_ = ChatTemplate::of_family(*family, m->tokenizer_->vocab());
    m->chat_template_warning_.clear();
  }
  return m;
}

std::string LlamaModel::chat_template_notice() const {
  if (chat_template_warning_.empty()) return {};
  // The warning names the vocabulary's evidence for the family: "... (its vocabulary has <start_of_turn>)".
  const std::string marker = "(its vocabulary has ";
  const size_t at = chat_template_warning_.find(marker);
  const std::string family(chat_family_name(chat_template_.family));
  const std::string guess =
      at == std::string::npos
          ? "the " + family + " template, the default when the vocabulary suggests none"
          : "the " + family + " template, guessed from the vocabulary (it has " +
                chat_template_warning_.substr(at + marker.size(), chat_template_warning_.size() - at - marker.size() - 1) + ")";
  const bool none = file_ == nullptr || file_->get_string_or("tokenizer.chat_template", "").empty();
  if (!none) return "The file's chat template is not one Inferscope recognises, so the chat uses " + guess +
                    ": replies may be framed wrongly.";
  return "No chat template in the file, so the chat uses " + guess +
         ". A model without one is usually a base model, trained to continue text rather than to answer: its replies "
         "may ramble or repeat. Perplexity, Learn and Compare on workload files do not use the template.";
}

KvGeometry LlamaModel::kv_geometry(DType kv_dtype) const {
  return KvGeometry{config_.n_layers, config_.n_kv_heads, config_.head_dim, kv_dtype};
}

int64_t LlamaModel::parameter_count() const {
  int64_t n = 0;
  if (!file_) {
    for (const LlamaLayerWeights& l : weights_.layers) {
      for (const MatrixRef* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) n += m->rows * m->cols;
    }
    n += weights_.token_embd.rows * weights_.token_embd.cols;
    return n + (config_.tied_output ? 0 : weights_.output.rows * weights_.output.cols);
  }
  for (const GgufTensorInfo& t : file_->tensors()) n += t.n_elements();
  return n;
}

}  // namespace inferscope
