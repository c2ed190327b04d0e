#include "kernels/cpu/packed_rows.h"

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>

namespace inferscope {
namespace {

// Where one block's parts lie, in the file and packed: its f16 scale fields (d, then m/dmin where
// present; at a packed block's start), its codes, and the K-quants' sub-block scales between the two.
struct BlockParts {
  size_t scales_at;        // the f16 values' offset in the file's block
  size_t scale_fields;     // f16 values there
  size_t codes_at;         // the codes' offset in the file's block
  size_t code_bytes;       // per row
  size_t packed_bytes;     // a packed block of eight rows
  size_t packed_codes_at;  // the codes' offset in it
};

template <class Block, class Packed>
constexpr BlockParts parts(size_t scale_fields) {
  return {0, scale_fields, offsetof(Block, qs), sizeof(Block::qs), sizeof(Packed), offsetof(Packed, qs)};
}

BlockParts parts_of(DType type) {
  switch (type) {
    case DType::Q4_0: return parts<BlockQ4_0, PackedQ4_0x8>(1);
    case DType::Q4_1: return parts<BlockQ4_1, PackedQ4_1x8>(2);
    case DType::Q8_0: return parts<BlockQ8_0, PackedQ8_0x8>(1);
    case DType::Q4_K: return parts<BlockQ4_K, PackedQ4_Kx8>(2);
    case DType::Q6_K:  // d at the end; ql and qh together form the codes
      return {offsetof(BlockQ6_K, d), 1, offsetof(BlockQ6_K, ql), sizeof(BlockQ6_K::ql) + sizeof(BlockQ6_K::qh),
              sizeof(PackedQ6_Kx8), offsetof(PackedQ6_Kx8, codes)};
    default: throw std::invalid_argument("pack_rows: type " + std::string(dtype_name(type)) + " does not pack");
  }
}

// Q4_K: row i's 6-bit scales and mins of one block, unpacked into the group's bytes.
void unpack_k_scales(const BlockQ4_K& src, int64_t i, PackedQ4_Kx8& dst) {
  for (int j = 0; j < QK_K / 32; ++j) k_scale_min(j, src.scales, dst.scales[j][i], dst.mins[j / 2][i][j % 2]);
}

}  // namespace

bool rows_packable(DType type) {
  switch (type) {
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q8_0:
    case DType::Q4_K:
    case DType::Q6_K: return true;
    default: return false;
  }
}

size_t packed_piece_slot(DType type, size_t p) {
  if (type != DType::Q6_K) return p;
  constexpr size_t kQlPieces = QK_K / 2 / 4;
  if (p < kQlPieces) {  // ql piece 16h + 8m + c: the m-th of trio 8h + c
    const size_t h = p / 16, m = p % 16 / 8, c = p % 8;
    return 3 * (8 * h + c) + m;
  }
  return 3 * (p - kQlPieces) + 2;  // qh piece 8h + c: the last of trio 8h + c
}

size_t packed_group_bytes(DType type, int64_t cols) {
  return parts_of(type).packed_bytes * static_cast<size_t>(cols / dtype_info(type).block_size);
}

void pack_row_group(const MatrixRef& w, int64_t row0, int64_t n, uint8_t* dst) {
  const BlockParts p = parts_of(w.type);
  const size_t block_bytes = dtype_info(w.type).block_bytes;
  const int64_t nb = w.cols / dtype_info(w.type).block_size;
  std::memset(dst, 0, packed_group_bytes(w.type, w.cols));
  for (int64_t i = 0; i < n; ++i) {
    const auto* src_row = static_cast<const uint8_t*>(w.data) + static_cast<size_t>(row0 + i) * w.row_stride;
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* src = src_row + b * block_bytes;
      uint8_t* group = dst + b * p.packed_bytes;
      // scale field f of row i at f16 slot f * 8 + i
      for (size_t f = 0; f < p.scale_fields; ++f)
        std::memcpy(group + (f * kPackedRows + i) * sizeof(f16_bits), src + p.scales_at + f * sizeof(f16_bits),
                    sizeof(f16_bits));
      if (w.type == DType::Q4_K)
        unpack_k_scales(*reinterpret_cast<const BlockQ4_K*>(src), i, *reinterpret_cast<PackedQ4_Kx8*>(group));
      if (w.type == DType::Q6_K)
        for (int j = 0; j < QK_K / 16; ++j)
          reinterpret_cast<PackedQ6_Kx8*>(group)->scales[j][i] = reinterpret_cast<const BlockQ6_K*>(src)->scales[j];
      // 4-byte piece c of row i at place i of its slot
      uint8_t* codes = group + p.packed_codes_at;
      for (size_t c = 0; c < p.code_bytes / 4; ++c)
        std::memcpy(codes + (packed_piece_slot(w.type, c) * kPackedRows + i) * 4, src + p.codes_at + c * 4, 4);
    }
  }
}

std::vector<uint8_t> pack_rows(const MatrixRef& w) {
  const int64_t groups = w.rows / kPackedRows;
  const size_t group_bytes = packed_group_bytes(w.type, w.cols);
  std::vector<uint8_t> packed(static_cast<size_t>(groups) * group_bytes);
  for (int64_t g = 0; g < groups; ++g) pack_row_group(w, g * kPackedRows, kPackedRows, packed.data() + g * group_bytes);
  return packed;
}

}  // namespace inferscope
