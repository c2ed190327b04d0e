#include "core/quant/converted_weights.h"

#include <map>
#include <stdexcept>
#include <string>

#include "core/gguf/gguf_file.h"
#include "core/model/llama_model.h"
#include "core/quant/quant_plan.h"

namespace inferscope {
namespace {

// Every matrix field of a LlamaWeights, in file order.
std::vector<MatrixRef*> matrix_fields(LlamaWeights& w) {
  std::vector<MatrixRef*> fields = {&w.token_embd};
  for (LlamaLayerWeights& l : w.layers) {
    for (MatrixRef* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) fields.push_back(m);
  }
  fields.push_back(&w.output);
  return fields;
}

// The file tensor a matrix of the model's weights lies in (a part of a fused tensor lies in it too).
const GgufTensorInfo& tensor_of(const GgufFile& file, const MatrixRef& m) {
  const auto* data = static_cast<const uint8_t*>(m.data);
  for (const GgufTensorInfo& t : file.tensors()) {
    if (data >= t.data && data < t.data + t.n_bytes) return t;
  }
  throw std::logic_error(file.path() + ": a weight matrix points at no tensor of the file");
}

// The matrix's name: its tensor's, and for a part of a fused tensor (phi3's attn_qkv) its rows:
// "blk.0.attn_qkv.weight rows 64..95".
std::string matrix_name(const GgufTensorInfo& t, const MatrixRef& m) {
  const auto first = static_cast<int64_t>(static_cast<size_t>(static_cast<const uint8_t*>(m.data) - t.data) / m.row_stride);
  if (first == 0 && t.dims.size() == 2 && t.dims[1] == m.rows) return t.name;
  return t.name + " rows " + std::to_string(first) + ".." + std::to_string(first + m.rows - 1);
}

}  // namespace

std::unique_ptr<ConvertedWeights> ConvertedWeights::convert(const LlamaModel& model, WeightQuant level,
                                                            ThreadPool& pool, const ConversionControl& control) {
  std::unique_ptr<ConvertedWeights> cw(new ConvertedWeights());
  cw->level_ = level;
  if (!model.has_file()) {
    // A shape-only model's matrices are already in the one format it is priced at: nothing to convert.
    if (level != WeightQuant::Native) {
      throw std::invalid_argument("a model shape has no weights to convert to " + std::string(weight_quant_name(level)) +
                                  " (its weights' format is fixed when the model is made)");
    }
    cw->weights_ = model.weights();
    return cw;
  }
  // A view of the model's weights (norms, biases and RoPE factors included) without copying its owned vectors.
  const LlamaWeights& own = model.weights();
  LlamaWeights& w = cw->weights_;
  w.token_embd = own.token_embd;
  w.layers = own.layers;
  w.output_norm = own.output_norm;
  w.output = own.output;
  w.rope_freq_factors = own.rope_freq_factors;

  // Each distinct matrix once (a tied output shares token_embd's data), with its format at this level.
  std::map<const void*, size_t> index_of;
  std::vector<MatrixConversion> conversions;
  std::vector<size_t> converted_index;
  for (MatrixRef* field : matrix_fields(w)) {
    if (!index_of.emplace(field->data, cw->matrices_.size()).second) continue;
    const GgufTensorInfo& tensor = tensor_of(model.file(), *field);
    ConvertedMatrix m{matrix_name(tensor, *field), *field, *field,
                      matrix_format(level, field->type, field->cols, tensor_place(model.file(), tensor.name))};
    if (m.format.stored != field->type) {
      conversions.push_back(MatrixConversion{m.name, *field, m.format.stored});
      converted_index.push_back(cw->matrices_.size());
    }
    cw->matrices_.push_back(std::move(m));
  }
  cw->buffers_ = convert_matrices(conversions, pool, control);
  for (size_t i = 0; i < conversions.size(); ++i) {
    const MatrixRef& src = conversions[i].source;
    const DType t = conversions[i].target;
    cw->matrices_[converted_index[i]].weights =
        MatrixRef{t, cw->buffers_[i].data(), src.rows, src.cols, row_bytes(t, src.cols)};
  }
  for (MatrixRef* field : matrix_fields(w)) *field = cw->matrices_[index_of.at(field->data)].weights;
  return cw;
}

int ConvertedWeights::converted_count() const {
  int n = 0;
  for (const ConvertedMatrix& m : matrices_) n += m.weights.data != m.source.data ? 1 : 0;
  return n;
}

std::vector<MatrixFallback> ConvertedWeights::fallbacks() const {
  std::vector<MatrixFallback> out;
  for (const ConvertedMatrix& m : matrices_) {
    if (m.format.fallback()) out.push_back(MatrixFallback{m.name, m.format});
  }
  return out;
}

}  // namespace inferscope
