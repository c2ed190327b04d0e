// A loaded Llama-family model: the mapped GGUF file, its config, weights, tokenizer and chat template.
#pragma once
#include <memory>
#include <string>

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

class LlamaModel {
 public:
  // Throws GgufError (bad or unsupported file) or std::invalid_argument (bad option).
  static std::unique_ptr<LlamaModel> load(const std::string& path, const ModelLoadOptions& options = {});
  ~LlamaModel();

  const GgufFile& file() const { return *file_; }
  const LlamaConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return weights_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const ChatTemplate& chat_template() const { return chat_template_; }
  const std::string& chat_template_warning() const { return chat_template_warning_; }
  KvGeometry kv_geometry(DType kv_dtype) const;
  int64_t parameter_count() const;

 private:
  LlamaModel() = default;
  std::unique_ptr<GgufFile> file_;
  LlamaConfig config_;
  LlamaWeights weights_;
  std::unique_ptr<Tokenizer> tokenizer_;
  ChatTemplate chat_template_;
  std::string chat_template_warning_;
};

}  // namespace inferscope
