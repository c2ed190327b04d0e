#include "core/model/llama_model.h"

#include <stdexcept>

#include "core/gguf/gguf_file.h"

namespace inferscope {
namespace {

// The notice for a template detect() guessed: for a file without one (`source` empty), or with one it
// does not recognise; `evidence` is the vocabulary's marker that chose `family`, "" for none.
std::string guessed_template_notice(std::string_view source, ChatTemplateFamily family, const std::string& evidence) {
  const std::string guess = "the " + std::string(chat_family_name(family)) + " template, " +
                            (evidence.empty() ? "the default when the vocabulary suggests none"
                                              : "guessed from the vocabulary (it has " + evidence + ")");
  if (!source.empty()) {
    return "The file's chat template is not one Inferscope recognises, so the chat uses " + guess +
           ": replies may be framed wrongly.";
  }
  return "No chat template in the file, so the chat uses " + guess +
         ". A model without one is usually a base model, trained to continue text rather than to answer: its replies "
         "may ramble or repeat. Perplexity, Learn and Compare on workload files do not use the template.";
}

}  // namespace

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
  const std::string source = m->file_->get_string_or("tokenizer.chat_template", "");
  std::string evidence;
  m->chat_template_ = ChatTemplate::detect(source, m->tokenizer_->vocab(), &m->chat_template_warning_, &evidence);
  if (!m->chat_template_warning_.empty()) {
    m->chat_template_notice_ = guessed_template_notice(source, m->chat_template_.family, evidence);
  }
  if (!options.chat_template_override.empty()) {
    const auto family = chat_family_from_name(options.chat_template_override);
    if (!family) throw std::invalid_argument("unknown chat template '" + options.chat_template_override + "'");
    // Forcing the family the file already has keeps what detection found (its default system prompt).
    if (*family != m->chat_template_.family) m->chat_template_ = ChatTemplate::of_family(*family, m->tokenizer_->vocab());
    m->chat_template_warning_.clear();
    m->chat_template_notice_.clear();
  }
  return m;
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
