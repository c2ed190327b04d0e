#include "kernels/cpu/matmul/packed_rows.h"

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
    case DType::Q5_0: return parts<BlockQ5_0, PackedQ5_0x8>(1);
    case DType::Q5_1: return parts<BlockQ5_1, PackedQ5_1x8>(2);
    case DType::Q5_K: return parts<BlockQ5_K, PackedQ5_Kx8>(2);
    case DType::Q6_K:  // d at the end; ql and qh together form the codes
      return {offsetof(BlockQ6_K, d), 1, offsetof(BlockQ6_K, ql), sizeof(BlockQ6_K::ql) + sizeof(BlockQ6_K::qh),
              sizeof(PackedQ6_Kx8), offsetof(PackedQ6_Kx8, codes)};
    default: throw std::invalid_argument("pack_rows: type " + std::string(dtype_name(type)) + " does not pack");
  }
}

// Q4_K, Q5_K: row i's 6-bit scales and mins of one block, unpacked into the group's bytes.
template <class Block, class Packed>
void unpack_k_scales(const uint8_t* src, int64_t i, uint8_t* dst) {
  const auto& block = *reinterpret_cast<const Block*>(src);
  auto& packed = *reinterpret_cast<Packed*>(dst);
  for (int j = 0; j < QK_K / 32; ++j) k_scale_min(j, block.scales, packed.scales[j][i], packed.mins[j / 2][i][j % 2]);
}

// Q5_0, Q5_1, Q5_K: row i's fifth bits of one block as fifth-bit words (packed_rows.h). Element x of
// span k (of S elements) is code b of step c of the span's low run, or of its high run, the second
// half; its bit goes to bit c % 4 (+ 4 for the high run) of byte b of word (S / 8 k + c) / 4.
template <class Block, class Packed>
void pack_fifth_bits(const uint8_t* src, int64_t i, uint8_t* dst) {
  const auto& block = *reinterpret_cast<const Block*>(src);
  auto& packed = *reinterpret_cast<Packed*>(dst);
  constexpr bool k_quant = sizeof(block.qh) == QK_K / 8;
  constexpr int kBlockElems = k_quant ? QK_K : 32, S = k_quant ? 64 : 32, kSteps = S / 8;
  for (int x = 0; x < kBlockElems; ++x) {
    // Q5_0/Q5_1: bit x of qh (little-endian); Q5_K: x = 32 j + l, bit j of qh[l]
    const int fifth = k_quant ? block.qh[x % 32] >> (x / 32) & 1 : block.qh[x / 8] >> (x % 8) & 1;
    const int k = x / S, r = x % S, high = r / (S / 2), c = r % (S / 2) / 4, b = r % 4;
    packed.qh[(kSteps * k + c) / 4][i][b] |= static_cast<uint8_t>(fifth << (c % 4 + 4 * high));
  }
}

}  // namespace

bool rows_packable(DType type) {
  switch (type) {
    case DType::Q4_0:
    case DType::Q4_1:
    case DType::Q8_0:
    case DType::Q4_K:
    case DType::Q6_K:
    case DType::Q5_0:
    case DType::Q5_1:
    case DType::Q5_K: return true;
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
      if (w.type == DType::Q4_K) unpack_k_scales<BlockQ4_K, PackedQ4_Kx8>(src, i, group);
      if (w.type == DType::Q5_K) unpack_k_scales<BlockQ5_K, PackedQ5_Kx8>(src, i, group);
      if (w.type == DType::Q5_0) pack_fifth_bits<BlockQ5_0, PackedQ5_0x8>(src, i, group);
      if (w.type == DType::Q5_1) pack_fifth_bits<BlockQ5_1, PackedQ5_1x8>(src, i, group);
      if (w.type == DType::Q5_K) pack_fifth_bits<BlockQ5_K, PackedQ5_Kx8>(src, i, group);
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

size_t packed_rows_bytes(const MatrixRef& w) {
  return static_cast<size_t>(w.rows / kPackedRows) * packed_group_bytes(w.type, w.cols);
}

void pack_rows_into(const MatrixRef& w, uint8_t* dst) {
  const size_t group_bytes = packed_group_bytes(w.type, w.cols);
  for (int64_t g = 0; g < w.rows / kPackedRows; ++g) pack_row_group(w, g * kPackedRows, kPackedRows, dst + g * group_bytes);
}

LargePageBytes pack_rows(const MatrixRef& w) {
  LargePageBytes packed(packed_rows_bytes(w));
  pack_rows_into(w, packed.data());
  return packed;
}

}  // namespace inferscope
