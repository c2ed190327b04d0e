#include "core/attention/naive_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/attention/kv_rows.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope {
namespace {

// One (sequence, query head): S = Q·Kᵀ·scale, causal mask, softmax, O = P·V.
void attend_head(const AttentionSeq& s, const AttentionShape& shape, int32_t head) {
  const int32_t hd = shape.head_dim;
  const int32_t kv_head = head / (shape.n_heads / shape.n_kv_heads);
  const int32_t ctx = s.pos0 + s.n_q;  // keys visible to the last query
  const size_t q_stride = static_cast<size_t>(shape.n_heads) * hd;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<float> k(static_cast<size_t>(ctx) * hd), v(static_cast<size_t>(ctx) * hd);
  std::vector<float> scores(static_cast<size_t>(s.n_q) * ctx);
  gather_kv_rows(s.kv, KvPart::Keys, kv_head, 0, ctx, hd, k.data());
  gather_kv_rows(s.kv, KvPart::Values, kv_head, 0, ctx, hd, v.data());
  for (int32_t i = 0; i < s.n_q; ++i) {
    const float* q = s.q + i * q_stride + static_cast<size_t>(head) * hd;
    float* row = scores.data() + static_cast<size_t>(i) * ctx;
    const int32_t visible = s.pos0 + i + 1;  // causal mask: keys 0 .. own position
    for (int32_t j = 0; j < visible; ++j) row[j] = dot_f32(q, k.data() + static_cast<size_t>(j) * hd, hd) * scale;
    softmax(row, visible);
    float* out = s.out + i * q_stride + static_cast<size_t>(head) * hd;
    std::fill(out, out + hd, 0.0f);
    for (int32_t j = 0; j < visible; ++j) {
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
    const size_t ctx = static_cast<size_t>(s.pos0) + s.n_q;
    peak = std::max(peak, sizeof(float) * (static_cast<size_t>(s.n_q) * ctx + 2 * ctx * shape.head_dim));
  }
  return peak;
}

}  // namespace inferscope
