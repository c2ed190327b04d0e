// A level's per-tensor plan for one file: the format each 2-D tensor gets (what `quantize` writes and
// the engine converts to), and the words `quantize`, `perplexity`, the engine and the Model tab use
// for the matrices that fall back to another format.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/quant/weight_quant.h"

namespace inferscope {

class GgufFile;

// The place of tensor `name` in `file`: its layer among {arch}.block_count, and whether the file has
// an output head of its own (no output.weight: token_embd is the output head). Throws GgufError when
// the block count is missing.
MatrixPlace tensor_place(const GgufFile& file, std::string_view name);

struct TensorFormat {
  std::string name;       // the GGUF tensor
  DType source;           // as the file stores it
  MatrixFormat format;    // at the level
  int64_t rows = 0, cols = 0;
  uint64_t bytes() const;  // at the level
};

// Every 2-D tensor of `file`, in file order.
std::vector<TensorFormat> plan_formats(const GgufFile& file, WeightQuant level);

// A matrix stored in another format than the policy wanted (rows not whole blocks of it).
struct MatrixFallback {
  std::string name;
  MatrixFormat format;
};

// The plan's tensors stored in another format than the policy wanted, in plan order.
std::vector<MatrixFallback> fallbacks_of(std::span<const TensorFormat> plan);

// "62 q4_K -> q5_0, 3 q6_K -> q8_0" (counts in order of first appearance); "" for none.
std::string fallback_summary(std::span<const MatrixFallback> fallbacks);

// How many of the plan's tensors each stored format holds, and their bytes, by format name.
struct FormatTotal {
  std::string type;  // dtype_name of the stored format
  int tensors = 0;
  uint64_t bytes = 0;
};
std::vector<FormatTotal> format_totals(std::span<const TensorFormat> plan);

}  // namespace inferscope
