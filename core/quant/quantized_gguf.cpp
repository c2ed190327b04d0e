#include "core/quant/quantized_gguf.h"

#include <filesystem>
#include <stdexcept>

#include "core/gguf/gguf_file.h"
#include "core/gguf/gguf_writer.h"

namespace inferscope {
namespace {

constexpr uint32_t kQuantizationVersion = 2;  // ggml's block layouts with f16 scales, as ours

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return std::filesystem::equivalent(a, b, ec);  // false (no error) when `b` does not exist yet
}

// A 2-D tensor as a matrix: rows of dims[0] elements.
MatrixRef as_matrix(const GgufTensorInfo& t) {
  return MatrixRef{t.type, t.data, t.dims[1], t.dims[0], row_bytes(t.type, t.dims[0])};
}

}  // namespace

QuantizedFileSummary write_quantized_gguf(const GgufFile& in, WeightQuant level, const std::string& out_path,
                                          ThreadPool& pool, const ConversionControl& control) {
  if (level == WeightQuant::Native) {
    throw std::invalid_argument("quantize: the native level keeps the file as it is; choose another level (" + weight_quant_names() + ")");
  }
  if (same_file(in.path(), out_path)) {
    throw std::invalid_argument("quantize: " + out_path + " is the input file; refusing to write over it");
  }
  QuantizedFileSummary summary;
  for (const GgufTensorInfo& t : in.tensors()) summary.input_tensor_bytes += t.n_bytes;
  summary.formats = plan_formats(in, level);
  std::vector<MatrixConversion> conversions;
  for (const TensorFormat& f : summary.formats) {
    if (f.format.stored != f.source) conversions.push_back(MatrixConversion{f.name, as_matrix(in.tensor(f.name)), f.format.stored});
  }
  std::vector<std::vector<uint8_t>> converted = convert_matrices(conversions, pool, control);

  GgufWriter writer;
  for (const auto& [key, value] : in.metadata()) writer.set(key, value);
  writer.set("general.file_type", GgufValue::u32(llama_file_type(level)));
  if (dtype_info(*weight_quant_dtype(level)).block_size > 1) {
    writer.set("general.quantization_version", GgufValue::u32(kQuantizationVersion));
  }
  // Tensors in the input's order: the re-encoded ones from `converted`, the rest byte for byte.
  size_t next = 0;
  for (const GgufTensorInfo& t : in.tensors()) {
    if (next < conversions.size() && conversions[next].name == t.name) {
      summary.output_tensor_bytes += converted[next].size();
      writer.add_tensor(t.name, conversions[next].target, t.dims, std::move(converted[next]));
      ++next;
    } else {
      summary.output_tensor_bytes += t.n_bytes;
      writer.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(t.data, t.data + t.n_bytes));
    }
  }
  summary.tensors = static_cast<int>(in.tensors().size());
  summary.converted = static_cast<int>(conversions.size());
  writer.write(out_path);
  return summary;
}

}  // namespace inferscope
