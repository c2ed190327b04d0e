// Internal to kernels/cuda: device helpers the attention kernels share: reading one cached K/V
// element through the block table, a query row's place, the dtype dispatch, the plan's sections and
// the schedules' launchers.
#pragma once
#include <cuda_fp16.h>

#include "kernels/cuda/attention_plan.h"
#include "kernels/cuda/cuda_check.h"

namespace inferscope::gpu {

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__half x) { return __half2float(x); }

// Token t's row of KV head `head` in K or V storage at `base` (KvDeviceView's layout).
template <typename KvT>
__device__ inline const KvT* kv_row(const KvDeviceView& kv, const uint8_t* base, int32_t head, int32_t t, int32_t head_dim) {
  const uint8_t* block = base + static_cast<size_t>(kv.block_table[t / kv.block_size]) * kv.block_stride;
  return reinterpret_cast<const KvT*>(block + head * kv.head_stride) + static_cast<size_t>(t % kv.block_size) * head_dim;
}

// Element d of that row, in f32.
template <typename KvT>
__device__ inline float kv_element(const KvDeviceView& kv, const uint8_t* base, int32_t head, int32_t t, int32_t d,
                                   int32_t head_dim) {
  return to_float(kv_row<KvT>(kv, base, head, t, head_dim)[d]);
}

// Float offset of (token, query head) in q and out, (n_q, n_heads * head_dim).
__device__ inline size_t qo_offset(const DeviceAttentionShape& shape, int32_t token, int32_t head) {
  return (static_cast<size_t>(token) * shape.n_heads + head) * shape.head_dim;
}

// The plan's sections in device memory: the header's at `header`, the data at `data`.
struct DeviceSections {
  const DeviceAttentionSeq* seqs;
  const void* tasks;
  const MergeTask* merges;
  float* data;
};

inline DeviceSections sections(const AttentionPlan& plan, const void* header, void* data) {
  const auto* base = static_cast<const uint8_t*>(header);
  return DeviceSections{reinterpret_cast<const DeviceAttentionSeq*>(base), base + plan.tasks_at,
                        reinterpret_cast<const MergeTask*>(base + plan.merges_at), static_cast<float*>(data)};
}

// Each schedule's launches (attention_naive.cu, attention_flash.cu): kernels only.
void launch_naive(const AttentionPlan& plan, const DeviceSections& at, const DeviceAttentionShape& shape,
                  Stream stream);
void launch_flash(const AttentionPlan& plan, const DeviceSections& at, const DeviceAttentionShape& shape,
                  Stream stream);
void launch_decode(const AttentionPlan& plan, const DeviceSections& at, const DeviceAttentionShape& shape,
                   Stream stream);

// Calls launch.template operator()<KvT>() with KvT the C++ type of the shape's KV dtype.
template <typename Launch>
void with_kv_type(DType dtype, Launch&& launch) {
  if (dtype == DType::F16) {
    launch.template operator()<__half>();
  } else {
    launch.template operator()<float>();
  }
}

}  // namespace inferscope::gpu
