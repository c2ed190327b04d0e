// Attention on a CUDA device: softmax(Q·Kᵀ/√d + causal and window mask)·V for every query head,
// reading K/V from device memory laid out as core/kv's KvView (paged blocks through a block table, or
// one contiguous block). Plain C++: callers need no CUDA header.
//
// Three schedules of the same function, each with its scratch size (the caller passes a device buffer
// of at least that many bytes; the call copies its per-sequence descriptors and work list into it):
//   naive_attention   - every row's scores materialised in scratch, then softmax, then P·V;
//   flash_attention   - prefill: tiles of query rows and of keys in shared memory, online softmax,
//                       no score matrix;
//   decode_attention  - 1..kMaxDecodeQueries queries per sequence (decode, speculative verify): the
//                       context in split-K chunks of kDecodeSplitKeys positions, fixed by position
//                       alone, each chunk's partial softmax state merged in chunk order by a second
//                       kernel. A row's output is bitwise the same whatever else is in the batch and
//                       however many queries came with it.
//   decode_attention_wide - the same plan and arithmetic, so the same bits as decode_attention; its
//                       tiles look each key row up once and read it in 16-byte loads, and its rows
//                       are dealt out to every warp (the engine runs decode_attention; bench
//                       --cuda-kernels measures both).
// Supported: KV in f16 or f32 (q8_0 is refused by name), head_dim 8, 64, 128 or 256, GQA, sliding
// window. Unsupported shapes throw std::invalid_argument; CUDA failures throw CudaError.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/format/dtype.h"

namespace inferscope::gpu {

using Stream = void*;  // a cudaStream_t (opaque here: this header needs no CUDA header); nullptr is the default stream

constexpr int32_t kDecodeSplitKeys = 512;  // positions per split-K chunk: 0..511, 512..1023, ...
constexpr int32_t kMaxDecodeQueries = 8;

// One sequence's K/V of one layer in device memory:
//   K of token t, KV head h = k_base + block_table[t / block_size] * block_stride + h * head_stride
//                             + (t % block_size) * head_dim * element size        (V from v_base)
struct KvDeviceView {
  const uint8_t* k_base = nullptr;
  const uint8_t* v_base = nullptr;
  const int32_t* block_table = nullptr;  // device memory, ceil(length / block_size) physical block ids
  int32_t length = 0;                    // tokens stored (positions 0 .. length-1)
  int32_t block_size = 0;
  size_t block_stride = 0;  // bytes
  size_t head_stride = 0;   // bytes
};

// One sequence's queries: n_q tokens at positions pos0 .. pos0+n_q-1 (their K/V already stored).
struct DeviceAttentionSeq {
  const float* q = nullptr;  // device, (n_q, n_heads * head_dim)
  float* out = nullptr;      // device, (n_q, n_heads * head_dim)
  int32_t n_q = 0;
  int32_t pos0 = 0;
  KvDeviceView kv;
};

struct DeviceAttentionShape {
  int32_t n_heads = 0;
  int32_t n_kv_heads = 0;  // query head h reads KV head h / (n_heads / n_kv_heads)
  int32_t head_dim = 0;
  int32_t window = 0;      // sliding window (0: none): a query at p sees keys max(0, p - window + 1) .. p
  DType kv_dtype = DType::F16;
};

// Whether the attention kernels are instantiated for this head size (8, 64, 128, 256).
bool supported_head_dim(int32_t head_dim);

size_t naive_attention_scratch_bytes(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape);
void naive_attention(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape, void* scratch,
                     size_t scratch_bytes, Stream stream);

size_t flash_attention_scratch_bytes(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape);
void flash_attention(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape, void* scratch,
                     size_t scratch_bytes, Stream stream);

size_t decode_attention_scratch_bytes(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape);
void decode_attention(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape, void* scratch,
                      size_t scratch_bytes, Stream stream);
// Scratch: decode_attention_scratch_bytes.
void decode_attention_wide(std::span<const DeviceAttentionSeq> seqs, const DeviceAttentionShape& shape, void* scratch,
                           size_t scratch_bytes, Stream stream);

// The calls above in two halves, for a caller that places the parts itself (CudaForward uploads every
// layer's plans before a step, so that the step's launches can be captured in a CUDA graph and
// replayed): plan_attention plans on the host and throws as the calls do; launch_attention only
// launches (no copy, no allocation), reading a device copy of plan.header at `header` (256-byte
// aligned) and plan.data_bytes of scratch at `data`. Its launch parameters are the plan's counts and
// those two addresses, nothing else of the plan: each call above is plan, header copy, launch.
enum class AttentionSchedule { Naive, Flash, Decode, DecodeWide };

struct AttentionPlan {
  AttentionSchedule schedule = AttentionSchedule::Flash;
  std::vector<uint8_t> header;         // the sequences, then the work items, then the merges
  size_t tasks_at = 0, merges_at = 0;  // where in the header
  size_t data_bytes = 0;               // naive scores or decode split states
  int32_t n_tasks = 0, n_merges = 0;
};

AttentionPlan plan_attention(AttentionSchedule schedule, std::span<const DeviceAttentionSeq> seqs,
                             const DeviceAttentionShape& shape);
void launch_attention(const AttentionPlan& plan, const void* header, void* data, const DeviceAttentionShape& shape,
                      Stream stream);

}  // namespace inferscope::gpu
