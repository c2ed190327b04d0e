// Reads a run of one KV head's cached rows (K or V) into f32, whatever the view's layout and dtype: a
// run that crosses paged blocks is read block by block, each block's part as one contiguous
// dequantize. In q8 a row is head_dim / 32 whole Q8_0 blocks, so consecutive rows are consecutive
// blocks and attention then runs on exactly the dequantized values.
#pragma once
#include <cstdint>

#include "core/kv/kv_cache.h"

namespace inferscope {

enum class KvPart { Keys, Values };

// dst (n, head_dim) = K or V of positions t0 .. t0+n-1 of KV head `head`.
void gather_kv_rows(const KvView& kv, KvPart part, int32_t head, int32_t t0, int32_t n, int32_t head_dim, float* dst);

}  // namespace inferscope
