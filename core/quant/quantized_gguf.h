// Saving a model at a quantization level: a GGUF file with the input's metadata, every 2-D tensor
// re-encoded exactly as ConvertedWeights encodes it in memory, and general.file_type set.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/quant/matrix_conversion.h"
#include "core/quant/quant_plan.h"
#include "core/quant/weight_quant.h"

namespace inferscope {

class GgufFile;
class ThreadPool;

struct QuantizedFileSummary {
  int tensors = 0;                         // in the file
  int converted = 0;                       // re-encoded (the rest are copied unchanged)
  std::vector<TensorFormat> formats;       // each 2-D tensor's format in the file written
  uint64_t input_tensor_bytes = 0;
  uint64_t output_tensor_bytes = 0;
};

// Writes `in` at `level` (not native) to `out_path` atomically (temp file + rename). Throws
// std::invalid_argument for native or when `out_path` is the input file, ConversionCancelled, or
// std::runtime_error naming the path on I/O failure.
QuantizedFileSummary write_quantized_gguf(const GgufFile& in, WeightQuant level, const std::string& out_path,
                                          ThreadPool& pool, const ConversionControl& control = {});

}  // namespace inferscope
