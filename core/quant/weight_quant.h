// Weight quantization levels: which format the matmuls read (native = the file's own types), and the
// per-tensor policy that picks each matrix's format at a level, as llama.cpp's llama-quantize does.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/format/dtype.h"

namespace inferscope {

// q4_k is llama.cpp's Q4_K_M mix, q6_k its Q6_K.
enum class WeightQuant { Native, F32, F16, Q8, Q4, Q4_1, Q4_K, Q6_K };

// "native", "f32", "f16", "q8", "q4", "q4_1", "q4_k", "q6_k".
std::string_view weight_quant_name(WeightQuant level);
std::optional<WeightQuant> weight_quant_from_name(std::string_view name);
// Throws std::invalid_argument naming the value and listing the valid names.
WeightQuant parse_weight_quant(std::string_view name);
std::string weight_quant_names();  // "native, f32, f16, q8, q4, q4_1, q4_k, q6_k"
std::vector<std::string> weight_quant_name_list();  // the same names, one each

// The level's base matrix format (F32, F16, Q8_0, Q4_0, Q4_1, Q4_K, Q6_K); nullopt for native. The
// policy below gives some matrices more bits, and rows that are not whole blocks another format.
std::optional<DType> weight_quant_dtype(WeightQuant level);

// What a matrix is to the model, as far as the policy cares.
enum class MatrixKind {
  OutputHead,  // output.weight, or token_embd.weight when the model has none (tied)
  Embedding,   // token_embd.weight of a model with its own output head
  AttnV,       // blk.N.attn_v.weight
  AttnQkv,     // blk.N.attn_qkv.weight (Q, K and V in one tensor)
  FfnDown,     // blk.N.ffn_down.weight
  Other,       // every other projection
};

struct MatrixPlace {
  MatrixKind kind = MatrixKind::Other;
  int32_t layer = 0;     // N of blk.N (0 outside the layers)
  int32_t n_layers = 1;  // the model's block count
};

// The place of GGUF tensor `name` in a model of `n_layers` layers; `tied`: there is no output.weight.
MatrixPlace matrix_place(std::string_view name, int32_t n_layers, bool tied);

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third one between,
// which its _M mixes give more bits in attn_v and ffn_down.
bool uses_more_bits(int32_t layer, int32_t n_layers);

// A matrix's format at a level: the one the policy wants, and the one it is stored in. They differ
// when a row is not a whole number of `wanted`'s blocks: llama.cpp's fallbacks Q4_K -> Q5_0,
// Q5_K -> Q5_1, Q6_K -> Q8_0, anything else (or a fallback that still does not fit) -> F16.
struct MatrixFormat {
  DType wanted = DType::F32;
  DType stored = DType::F32;
  bool fallback() const { return stored != wanted; }
};

// The policy: native keeps `source`; f32/f16/q8 use the level's format everywhere. Below 8 bits the
// token embedding and the output head keep at least 6 bits (Q6_K; Q8_0 for rows that are not whole
// 256-blocks), since rounding them costs far more quality than their bytes save. q4_k is the Q4_K_M
// mix: Q4_K, with Q6_K for attn_v and ffn_down in uses_more_bits() layers and Q5_K for a fused
// attn_qkv. q6_k is Q6_K everywhere.
MatrixFormat matrix_format(WeightQuant level, DType source, int64_t cols, const MatrixPlace& place = {});

// llama.cpp's general.file_type (llama_ftype) for a file written at `level`: ALL_F32 = 0,
// MOSTLY_F16 = 1, MOSTLY_Q4_0 = 2, MOSTLY_Q4_1 = 3, MOSTLY_Q8_0 = 7, MOSTLY_Q4_K_M = 15,
// MOSTLY_Q6_K = 18. Throws for native.
uint32_t llama_file_type(WeightQuant level);

}  // namespace inferscope
