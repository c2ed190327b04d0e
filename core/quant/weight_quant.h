// Weight quantization levels: which format the matmuls read (native = the file's own types).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/cpu/dtype.h"

namespace inferscope {

enum class WeightQuant { Native, F32, F16, Q8, Q4, Q4_1 };

// "native", "f32", "f16", "q8", "q4", "q4_1".
std::string_view weight_quant_name(WeightQuant level);
std::optional<WeightQuant> weight_quant_from_name(std::string_view name);
// Throws std::invalid_argument naming the value and listing the valid names.
WeightQuant parse_weight_quant(std::string_view name);
std::string weight_quant_names();  // "native, f32, f16, q8, q4, q4_1"

// The level's matrix format (F32, F16, Q8_0, Q4_0, Q4_1); nullopt for native.
std::optional<DType> weight_quant_dtype(WeightQuant level);

// What a matrix is to the model: the per-tensor policy keeps some at more bits.
enum class MatrixRole { Layer, Embedding, Output };  // a layer's projection, token_embd, the output head

// The role of the GGUF tensor `name` (token_embd.weight, output.weight, anything else).
MatrixRole matrix_role(std::string_view name);

// The format a matrix stored as `source`, rows of `cols` elements, has at `level`: `source` for
// native, else the level's format, or F16 when a row is not a whole number of its blocks. As in
// llama.cpp's per-tensor policy, the 4-bit levels keep the token embedding and the output head at
// 8 bits (Q8_0, at least the 6 bits llama.cpp gives them), since rounding them costs far more
// quality than their bytes save.
DType stored_type(WeightQuant level, DType source, int64_t cols, MatrixRole role = MatrixRole::Layer);

// True when `stored` (stored_type's answer) is the f16 fallback for rows that are not whole blocks
// of `level`'s format, rather than the format the level chose.
bool is_f16_fallback(WeightQuant level, DType stored);

// llama.cpp's general.file_type (llama_ftype) for a file written at `level`: ALL_F32 = 0,
// MOSTLY_F16 = 1, MOSTLY_Q4_0 = 2, MOSTLY_Q4_1 = 3, MOSTLY_Q8_0 = 7. Throws for native.
uint32_t llama_file_type(WeightQuant level);

}  // namespace inferscope
