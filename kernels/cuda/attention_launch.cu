// The attention API (attention.h): plans from attention_plan, launches from each schedule's file; the
// one-buffer calls put the plan's header at the scratch's start and its data after it.
#include <stdexcept>
#include <string>

#include "kernels/cuda/attention.h"
#include "kernels/cuda/attention_device.cuh"

namespace inferscope::gpu {
namespace {

// Plan, header copied to the scratch's start, launch: the one-buffer calls.
void run_in_scratch(AttentionSchedule schedule, std::span<const DeviceAttentionSeq> seqs,
                    const DeviceAttentionShape& shape, void* scratch, size_t bytes, Stream stream) {
  const AttentionPlan plan = plan_attention(schedule, seqs, shape);
  if (bytes < scratch_bytes(plan)) {
    throw std::invalid_argument("CUDA attention: scratch of " + std::to_string(bytes) + " bytes, " +
                                std::to_string(scratch_bytes(plan)) + " needed");
  }
  auto* base = static_cast<uint8_t*>(scratch);
  INFERSCOPE_CUDA_CHECK(cudaMemcpyAsync(base, plan.header.data(), plan.header.size(), cudaMemcpyHostToDevice,
                                        static_cast<cudaStream_t>(stream)));
  launch_attention(plan, base, base + data_offset(plan), shape, stream);
}

}  // namespace

AttentionPlan plan_attention(AttentionSchedule schedule, std::span<const DeviceAttentionSeq> seqs,
                             const DeviceAttentionShape& shape) {
  switch (schedule) {
    case AttentionSchedule::Naive: return plan_naive(seqs, shape);
    case AttentionSchedule::Flash: return plan_flash(seqs, shape);
    case AttentionSchedule::Decode:
    case AttentionSchedule::DecodeWide: return plan_decode(seqs, shape, schedule);
  }
  throw std::invalid_argument("CUDA attention: unknown schedule");
}

void launch_attention(const AttentionPlan& plan, const void* header, void* data, const DeviceAttentionShape& shape,
                      Stream stream) {
  const DeviceSections at = sections(plan, header, data);
  switch (plan.schedule) {
    case AttentionSchedule::Naive: return launch_naive(plan, at, shape, stream);
    case AttentionSchedule::Flash: return launch_flash(plan, at, shape, stream);
    case AttentionSchedule::Decode:
    case AttentionSchedule::DecodeWide: return launch_decode(plan, at, shape, stream);
  }
}

size_t naive_attention_scratch_bytes(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape) {
  return scratch_bytes(plan_naive(seqs, shape));
}
void naive_attention(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape, void* scratch,
                     size_t scratch_bytes, Stream stream) {
  run_in_scratch(AttentionSchedule::Naive, seqs, shape, scratch, scratch_bytes, stream);
}

size_t flash_attention_scratch_bytes(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape) {
  return scratch_bytes(plan_flash(seqs, shape));
}
void flash_attention(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape, void* scratch,
                     size_t scratch_bytes, Stream stream) {
  run_in_scratch(AttentionSchedule::Flash, seqs, shape, scratch, scratch_bytes, stream);
}

size_t decode_attention_scratch_bytes(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape) {
  return scratch_bytes(plan_decode(seqs, shape));
}
void decode_attention(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape, void* scratch,
                      size_t scratch_bytes, Stream stream) {
  run_in_scratch(AttentionSchedule::Decode, seqs, shape, scratch, scratch_bytes, stream);
}

void decode_attention_wide(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape, void* scratch,
                           size_t scratch_bytes, Stream stream) {
  run_in_scratch(AttentionSchedule::DecodeWide, seqs, shape, scratch, scratch_bytes, stream);
}

}  // namespace inferscope::gpu
