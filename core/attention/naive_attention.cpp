#include "core/attention/naive_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/attention/kv_rows.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {
namespace {

// One (sequence, query head): S = Q·Kᵀ·scale, causal and window mask, softmax, O = P·V.
void attend_head(const AttentionSeq& s, const AttentionShape& shape, int32_t head) {
  const int32_t hd = shape.head_dim;
  const int32_t kv_head = head / (shape.n_heads / shape.n_kv_heads);
  const int32_t lo = first_visible_key(shape, s.pos0);  // first key visible to the first query
  const int32_t span = s.pos0 + s.n_q - lo;             // keys lo .. the last query's position
  const size_t q_stride = static_cast<size_t>(shape.n_heads) * hd;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<float> k(static_cast<size_t>(span) * hd), v(static_cast<size_t>(span) * hd);
  std::vector<float> scores(static_cast<size_t>(s.n_q) * span);
  gather_kv_rows(s.kv, KvPart::Keys, kv_head, lo, span, hd, k.data());
  gather_kv_rows(s.kv, KvPart::Values, kv_head, lo, span, hd, v.data());
  for (int32_t i = 0; i < s.n_q; ++i) {
    const float* q = s.q + i * q_stride + static_cast<size_t>(head) * hd;
    // keys first .. end-1 of the gathered ones: the window's start .. own position
    const int32_t first = first_visible_key(shape, s.pos0 + i) - lo, end = s.pos0 + i + 1 - lo;
    float* row = scores.data() + static_cast<size_t>(i) * span;
    for (int32_t j = first; j < end; ++j) row[j] = dot_f32(q, k.data() + static_cast<size_t>(j) * hd, hd) * scale;
    softmax(row + first, end - first);
    float* out = s.out + i * q_stride + static_cast<size_t>(head) * hd;
    std::fill(out, out + hd, 0.0f);
    for (int32_t j = first; j < end; ++j) {
      const float p = row[j];
      const float* vj = v.data() + static_cast<size_t>(j) * hd;
      for (int32_t d = 0; d < hd; ++d) out[d] += p * vj[d];
    }
  }
}

}  // namespace

void NaiveAttention::forward(std::span<const AttentionSeq> seqs, const AttentionShape& shape, ThreadPool& pool) {
  const int64_t n_tasks = static_cast<int64_t>(seqs.size()) * shape.n_heads;
  pool.parallel_for(n_tasks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) attend_head(seqs[t / shape.n_heads], shape, static_cast<int32_t>(t % shape.n_heads));
  });
}

size_t NaiveAttention::scratch_bytes(std::span<const AttentionSeq> seqs, const AttentionShape& shape) const {
  size_t peak = 0;
  for (const AttentionSeq& s : seqs) {
    const size_t span = static_cast<size_t>(s.pos0 + s.n_q - first_visible_key(shape, s.pos0));
    peak = std::max(peak, sizeof(float) * (static_cast<size_t>(s.n_q) * span + 2 * span * shape.head_dim));
  }
  return peak;
}

}  // namespace inferscope
