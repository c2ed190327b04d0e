// The Llama forward pass on a CUDA device (ForwardPass), with kernels/cuda's kernels: weights uploaded
// once (DeviceWeights), K/V in a device mirror of the engine's cache (DeviceKvMirror), one stream.
// Per step: token ids, positions, block tables and K/V destinations go up; embedding, per layer
// add+RMSNorm, Q/K/V GEMVs, qwen3's per-head Q/K norms, RoPE, the K/V store, attention (flash for a
// prefill chunk, split-K decode for up to 8 queries, the naive kernel when the engine's attention is
// "naive"), output projection, gated FFN (SwiGLU), final norm and output head on the rows that need
// logits; the logits come back to the host.
//
// Every matmul is the batch-invariant GEMV in chunks of at most 8 rows; a cuBLAS GEMM for prefill is
// a later increment. Refused by name at construction: q8 activations, Q/K/V biases (qwen2), query
// scaling, scaled embeddings, post norms, the GELU gate, local layers and the logit soft cap
// (gemma3); and, when a cache is first used, a q8 KV dtype. Every CUDA call is checked (CudaError
// names the call and CUDA's message). Not yet validated on a GPU in this repository's CI.
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "core/cuda/device_allocation.h"
#include "core/cuda/device_kv_mirror.h"
#include "core/cuda/device_weights.h"
#include "core/model/forward_pass.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cuda/attention.h"

namespace inferscope {

class LlamaModel;

class CudaForward final : public ForwardPass {
 public:
  // Selects CUDA device `device` and uploads `weights` (the model's shapes; they may go once built).
  // Throws std::runtime_error when no such device is usable, std::invalid_argument for what the
  // kernels do not cover (named).
  CudaForward(const LlamaModel& model, const LlamaWeights& weights, const MatmulOptions& matmul, int32_t device);
  ~CudaForward() override;

  void run(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention, ThreadPool& pool,
           std::vector<float>& logits, int32_t layers = 0) override;
  size_t last_attention_scratch_bytes() const override { return attention_scratch_bytes_; }
  double last_attention_seconds() const override { return attention_seconds_; }
  double last_matmul_seconds() const override { return matmul_seconds_; }  // every GEMV of the last run()
  std::optional<DeviceMemory> device_memory() const override;

 private:
  struct Timer;  // CUDA event pairs around attention and matmuls
  void bind(KvCache& kv);  // a device mirror for a cache not seen before
  void upload_step(std::span<const BatchSeq> batch, const KvCache& kv, int32_t n_layers);
  // y = W x for n rows, in GEMV chunks of at most 8 rows, timed as matmul.
  void gemv_rows(const gpu::DeviceMatrix& w, const float* x, int64_t n, float* y);
  void attend(std::span<const BatchSeq> batch, const KvCache& kv, int32_t layer, bool naive);

  const LlamaModel& model_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<DeviceWeights> weights_;
  const KvCache* bound_ = nullptr;       // the cache mirror_ mirrors
  std::vector<KvRegion> mirror_regions_;  // and its regions then
  std::shared_ptr<DeviceKvMirror> mirror_;
  std::unique_ptr<Timer> timer_;
  // Activations of the step, (tokens, width) row-major, and the step's tables.
  DeviceAllocation x_, xb_, delta_, q_, k_, v_, att_, gate_, up_, last_, logits_, attention_scratch_;
  DeviceAllocation tokens_, positions_, block_tables_, store_rows_;
  std::vector<int32_t> host_tokens_, host_positions_, host_tables_;
  std::vector<size_t> table_offset_;       // per batch sequence: its block table's first entry in block_tables_
  std::vector<uint8_t*> host_store_rows_;  // per layer: n_tok K rows then n_tok V rows (head 0)
  size_t store_head_stride_ = 0;           // bytes from one KV head's row to the next
  std::vector<gpu::DeviceAttentionSeq> prefill_, decode_;
  size_t attention_scratch_bytes_ = 0;
  double attention_seconds_ = 0, matmul_seconds_ = 0;
};

}  // namespace inferscope
