#include "core/attention/kv_rows.h"

#include <algorithm>

#include "kernels/cpu/quantize.h"

namespace inferscope {

void gather_kv_rows(const KvView& kv, KvPart part, int32_t head, int32_t t0, int32_t n, int32_t head_dim, float* dst) {
  const int32_t end = t0 + n;
  for (int32_t t = t0; t < end;) {
    // rows t .. run_end-1 sit in one block: one head's rows of a block are contiguous
    const int32_t run_end = std::min(end, (t / kv.block_size + 1) * kv.block_size);
    const uint8_t* src = part == KvPart::Keys ? kv.key(t, head, head_dim) : kv.value(t, head, head_dim);
    dequantize_row(kv.dtype, src, dst, static_cast<int64_t>(run_end - t) * head_dim);
    dst += static_cast<size_t>(run_end - t) * head_dim;
    t = run_end;
  }
}

}  // namespace inferscope
