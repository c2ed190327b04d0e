// A loaded Llama-family model: the mapped GGUF file, its config, weights, tokenizer and chat template.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/kv/kv_cache.h"
#include "core/model/llama_weights.h"
#include "core/model/model_config.h"
#include "core/tokenizer/chat_template.h"
#include "core/tokenizer/tokenizer.h"

namespace inferscope {

class GgufFile;

struct ModelLoadOptions {
  std::string chat_template_override;  // a family name ("chatml", "llama3", ...) or "" for the file's own
};

// The format a weight matrix is stored (or priced) in, by its GGUF tensor name and row length.
using MatrixFormatFn = std::function<DType(std::string_view tensor, int64_t cols)>;

class LlamaModel {
 public:
  // Throws GgufError (bad or unsupported file) or std::invalid_argument (bad option).
  static std::unique_ptr<LlamaModel> load(const std::string& path, const ModelLoadOptions& options = {});
  // A model of `config`'s shape with no file and no weight data, for a dry run (serve-sim
  // --model-shape): each matrix in the format `format_of` gives it, and a vocabulary of
  // config.vocab_size placeholder tokens that spell no text, so prompts must be token ids.
  static std::unique_ptr<LlamaModel> shape_only(const LlamaConfig& config, const MatrixFormatFn& format_of);
  ~LlamaModel();

  bool has_file() const { return file_ != nullptr; }  // false for a shape_only() model
  const GgufFile& file() const { return *file_; }
  const LlamaConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return weights_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const ChatTemplate& chat_template() const { return chat_template_; }
  const std::string& chat_template_warning() const { return chat_template_warning_; }
  // What a user should know when the chat template was guessed, in sentences ("" when the file's own
  // template was recognised or one was forced): a file without a template is usually a base model.
  const std::string& chat_template_notice() const { return chat_template_notice_; }
  KvGeometry kv_geometry(DType kv_dtype) const;
  int64_t parameter_count() const;

 private:
  LlamaModel() = default;
  std::unique_ptr<GgufFile> file_;
  LlamaConfig config_;
  LlamaWeights weights_;
  std::unique_ptr<Tokenizer> tokenizer_;
  ChatTemplate chat_template_;
  std::string chat_template_warning_, chat_template_notice_;
  std::vector<uint8_t> matrix_ids_;  // shape_only(): one byte per distinct matrix, its data address
};

}  // namespace inferscope
