// Naive attention on the GPU: for each (token, query head) one block materialises the row's scores in
// scratch, softmaxes them there, then sums the value rows they weight.
#include <cmath>

#include "kernels/cuda/attention.h"
#include "kernels/cuda/attention_device.cuh"

namespace inferscope::gpu {
namespace {

constexpr int kThreads = 256;

enum class Reduce { Max, Sum };

// The block's max or sum of x, every thread's value combined in a fixed order.
template <Reduce op>
__device__ float block_reduce(float x, float* shared) {
  shared[threadIdx.x] = x;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      const float other = shared[threadIdx.x + stride];
      shared[threadIdx.x] = op == Reduce::Max ? fmaxf(shared[threadIdx.x], other) : shared[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const float result = shared[0];
  __syncthreads();
  return result;
}

// grid (task, query head): scores S_j = q·k_j / sqrt(d) for the row's visible keys, P = softmax(S)
// in place, out = P·V.
template <typename KvT>
__global__ void naive_attention_kernel(const DeviceAttentionSeq* seqs, const NaiveTask* tasks, float* scores,
                                       DeviceAttentionShape shape) {
  __shared__ float reduce_buf[kThreads];
  const NaiveTask task = tasks[blockIdx.x];
  const DeviceAttentionSeq& s = seqs[task.seq];
  const int32_t head = blockIdx.y, hd = shape.head_dim, kv_head = head / (shape.n_heads / shape.n_kv_heads);
  const int32_t pos = s.pos0 + task.token;
  // row-local key range: first visible key .. own position
  const int32_t begin = first_visible_key(shape, pos) - task.first_key, end = pos + 1 - task.first_key;
  const float* q = s.q + qo_offset(shape, task.token, head);
  float* row = scores + task.scores + static_cast<int64_t>(head) * task.span;
  const float scale = rsqrtf(static_cast<float>(hd));

  float local_max = -INFINITY;
  for (int32_t j = begin + threadIdx.x; j < end; j += kThreads) {
    float dot = 0.0f;
    for (int32_t d = 0; d < hd; ++d) dot += q[d] * kv_element<KvT>(s.kv, s.kv.k_base, kv_head, task.first_key + j, d, hd);
    row[j] = dot * scale;
    local_max = fmaxf(local_max, row[j]);
  }
  const float row_max = block_reduce<Reduce::Max>(local_max, reduce_buf);
  float local_sum = 0.0f;
  for (int32_t j = begin + threadIdx.x; j < end; j += kThreads) {
    row[j] = expf(row[j] - row_max);
    local_sum += row[j];
  }
  const float inv_sum = 1.0f / block_reduce<Reduce::Sum>(local_sum, reduce_buf);  // the reduction's barriers publish P
  float* out = s.out + qo_offset(shape, task.token, head);
  for (int32_t d = threadIdx.x; d < hd; d += kThreads) {
    float acc = 0.0f;
    for (int32_t j = begin; j < end; ++j) acc += row[j] * kv_element<KvT>(s.kv, s.kv.v_base, kv_head, task.first_key + j, d, hd);
    out[d] = acc * inv_sum;
  }
}

}  // namespace

void launch_naive(const AttentionPlan& plan, const DeviceSections& at, const DeviceAttentionShape& shape,
                  Stream stream) {
  if (plan.n_tasks == 0) return;
  with_kv_type(shape.kv_dtype, [&]<typename KvT>() {
    const dim3 grid(plan.n_tasks, shape.n_heads);
    naive_attention_kernel<KvT><<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        at.seqs, static_cast<const NaiveTask*>(at.tasks), at.data, shape);
  });
  INFERSCOPE_CUDA_CHECK_LAUNCH("naive_attention_kernel");
}

}  // namespace inferscope::gpu
