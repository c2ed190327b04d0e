// Re-encoding weight matrices: every row dequantized to f32 and quantized to the target format,
// rows in parallel, with progress and cancellation between slices of rows.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/matmul/matmul.h"

namespace inferscope {

class ThreadPool;

// fraction: elements done over all matrices (0..1]; tensor: the matrix being converted ("" when
// there was nothing to convert). Called on the calling thread only.
using ConversionProgressFn = std::function<void(double fraction, const std::string& tensor)>;

struct ConversionControl {
  ConversionProgressFn on_progress = nullptr;
  const std::atomic<bool>* cancel = nullptr;  // once set, the conversion throws ConversionCancelled
};

// A conversion stopped by ConversionControl::cancel; nothing it made is kept.
class ConversionCancelled : public std::runtime_error {
 public:
  ConversionCancelled() : std::runtime_error("weight conversion cancelled") {}
};

struct MatrixConversion {
  std::string name;  // the GGUF tensor, for progress and messages
  MatrixRef source;
  DType target = DType::F32;
};

// One dense buffer (rows * row_bytes(target, cols) bytes) per conversion, in order. The result
// depends only on the source and target (not on the thread count). Throws std::invalid_argument
// naming the tensor for a source type we cannot read, a target we cannot write, or partial blocks.
std::vector<std::vector<uint8_t>> convert_matrices(std::span<const MatrixConversion> conversions, ThreadPool& pool,
                                                   const ConversionControl& control = {});

}  // namespace inferscope
