// Weight rows interleaved eight at a time for the packed-row kernels (int8 and f32 activations) of
// Q4_0, Q4_1, Q8_0, Q4_K and Q6_K, and (f32 activations only) Q5_0, Q5_1 and Q5_K: block b of eight
// rows lies together, their f16 scales first (d of rows 0..7, then m/dmin), then their codes in
// 4-byte pieces, piece c of row 0, of row 1, ... of row 7, then piece c + 1. One 256-bit load then
// holds the same four elements of eight rows, and the kernel keeps one row per lane (no horizontal
// sums). A piece's bytes are the row's own code bytes (Q6_K: ql, then qh; the Q5 types: qs), so every
// type packs to its own size, except Q4_K and Q5_K, whose 6-bit sub-block scales and mins are unpacked
// into bytes (+2.8%, +2.3%); the K-quants' sub-block scales lie between the f16 scales and the codes.
// The Q5 types' fifth bits lie before the codes, regrouped into fifth-bit words (below).
// The pieces lie in the order the kernel reads them, so a group streams from memory front to back:
// file order, except Q6_K (packed_piece_slot).
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/cpu/matmul/matmul.h"
#include "kernels/format/quant_blocks.h"

namespace inferscope {

constexpr int kPackedRows = 8;

struct PackedQ4_0x8 { f16_bits d[kPackedRows]; uint8_t qs[kPackedRows * QK4_0 / 2]; };
struct PackedQ4_1x8 { f16_bits d[kPackedRows]; f16_bits m[kPackedRows]; uint8_t qs[kPackedRows * QK4_1 / 2]; };
struct PackedQ8_0x8 { f16_bits d[kPackedRows]; int8_t qs[kPackedRows * QK8_0]; };

// scales[j][i]: sub-block j's scale in row i; mins[k][i]: row i's mins of sub-blocks 2k and 2k + 1.
struct PackedQ4_Kx8 {
  f16_bits d[kPackedRows];
  f16_bits dmin[kPackedRows];
  uint8_t scales[QK_K / 32][kPackedRows];
  uint8_t mins[QK_K / 64][kPackedRows][2];
  uint8_t qs[kPackedRows * QK_K / 2];
};

// scales[j][i]: sub-block j's scale in row i; codes: for half h and piece c (0..7) in turn, the ql
// pieces 16h + c and 16h + 8 + c, then the qh piece 8h + c (the three that hold elements
// 128h + 32k + 4c..4c+3, k = 0..3), each as eight rows' pieces.
struct PackedQ6_Kx8 {
  f16_bits d[kPackedRows];
  int8_t scales[QK_K / 16][kPackedRows];
  uint8_t codes[kPackedRows * (QK_K / 2 + QK_K / 4)];
};

// The Q5 types' fifth bits, one 32-bit word per row for four steps of a span (as the kernel reads
// the nibble pieces: step c's piece holds the low run's elements 4c..4c+3 in its low nibbles, the high
// run's in its high ones): bit j of byte b is the fifth bit of step j's low code b, bit 4 + j that of
// its high code b, so each step's bits come to bit 4 of their bytes with one shift and one mask.
// qh[w][i] is row i's word w: Q5_0/Q5_1 one per block, Q5_K two per span of sub-blocks 2k, 2k + 1
// (words 2k, 2k + 1: steps 0..3 and 4..7).
struct PackedQ5_0x8 { f16_bits d[kPackedRows]; uint8_t qh[1][kPackedRows][4]; uint8_t qs[kPackedRows * QK5_0 / 2]; };
struct PackedQ5_1x8 {
  f16_bits d[kPackedRows];
  f16_bits m[kPackedRows];
  uint8_t qh[1][kPackedRows][4];
  uint8_t qs[kPackedRows * QK5_1 / 2];
};
// As PackedQ4_Kx8, with the fifth-bit words before the nibble pieces.
struct PackedQ5_Kx8 {
  f16_bits d[kPackedRows];
  f16_bits dmin[kPackedRows];
  uint8_t scales[QK_K / 32][kPackedRows];
  uint8_t mins[QK_K / 64][kPackedRows][2];
  uint8_t qh[QK_K / 32][kPackedRows][4];
  uint8_t qs[kPackedRows * QK_K / 2];
};

static_assert(sizeof(PackedQ4_0x8) == kPackedRows * sizeof(BlockQ4_0));
static_assert(sizeof(PackedQ4_1x8) == kPackedRows * sizeof(BlockQ4_1));
static_assert(sizeof(PackedQ8_0x8) == kPackedRows * sizeof(BlockQ8_0));
static_assert(sizeof(PackedQ6_Kx8) == kPackedRows * sizeof(BlockQ6_K));
static_assert(sizeof(PackedQ5_0x8) == kPackedRows * sizeof(BlockQ5_0));
static_assert(sizeof(PackedQ5_1x8) == kPackedRows * sizeof(BlockQ5_1));

// Q4_0, Q4_1, Q8_0, Q4_K, Q6_K and the Q5 types.
bool rows_packable(DType type);

// Where a row's 4-byte code piece p (its code bytes 4p..4p+3 in the file's block; Q6_K: ql, then qh)
// lies among a packed block's pieces: slot s holds the eight rows' pieces at codes + 32 * s.
size_t packed_piece_slot(DType type, size_t p);

// Bytes of one group of eight packed rows of `cols` elements.
size_t packed_group_bytes(DType type, int64_t cols);

// Packs rows [row0, row0 + n) of w (n <= 8) as one group at dst; the missing rows of a short group
// are zero (scale 0, so they multiply to 0). w.type must be packable.
void pack_row_group(const MatrixRef& w, int64_t row0, int64_t n, uint8_t* dst);

// The whole groups of w (rows / 8 of them) packed one after another; the last rows % 8 rows are left
// out (the kernels pack those on the fly). packed_rows_bytes(w) bytes, written at dst by
// pack_rows_into, or returned by pack_rows (in large pages: they are read at every token).
size_t packed_rows_bytes(const MatrixRef& w);
void pack_rows_into(const MatrixRef& w, uint8_t* dst);
LargePageBytes pack_rows(const MatrixRef& w);

}  // namespace inferscope
