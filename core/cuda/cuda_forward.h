// The Llama forward pass on a CUDA device (ForwardPass), with kernels/cuda's kernels: weights uploaded
// once (DeviceWeights), K/V in a device mirror of the engine's cache (DeviceKvMirror), one stream.
// Per step: token ids, positions, block tables and K/V destinations go up; the embedding, then each
// layer's steps as forward_recipe() lists them, as LlamaForward walks them (add+RMSNorm, Q/K/V GEMVs,
// qwen3's per-head Q/K norms, RoPE, the K/V store, attention: flash for a prefill chunk, split-K decode
// for up to 8 queries, the naive kernel when the engine's attention is "naive"; output projection,
// gated FFN with SwiGLU; a residual is added by the norm after it), then the final norm and output
// head on the rows that need logits; the logits come back to the host.
//
// Matmuls: a sequence bringing more than 8 tokens to the step (a prefill chunk) goes through the
// cuBLAS GEMM (gemm.h: f16 inputs, f32 accumulation); every other sequence's rows (decode, speculative
// verification, short prompts) through the batch-invariant GEMV in chunks of at most 8 rows. So on
// CUDA exactness holds between decode and verify only: a decode or verify row's logits never depend on
// the batch, but a prefill chunk's K/V and logits depend on its length (cuBLAS picks its algorithm by
// shape), and differ from the same tokens fed one at a time.
//
// A step is prepared first (the tables and every layer's attention plan copied to fixed device
// buffers), then its launches are queued from those buffers alone. A decode step (every sequence at
// one token, flash/decode attention) is captured as a CUDA graph the second time its shape is seen
// (the batch size, the layers run and each attention call's work counts, which change only when a
// sequence crosses a 512-position split boundary) and replayed after that: the same launches with the
// same parameters, so its logits are bitwise those of the uncaptured step. Graphs are dropped when a
// buffer they use moves (grows) or the KV mirror is rebuilt; the weights never change within a
// CudaForward. INFERSCOPE_CUDA_GRAPHS=0 in the environment (or set_cuda_graphs(false)) turns them off.
// A replayed step's attention and matmul times are not measured (reported as 0).
//
// Refused by name at construction: q8 activations, Q/K/V biases (qwen2), query scaling, scaled
// embeddings, post norms, the GELU gate, local layers and the logit soft cap (gemma3); and, when a
// cache is first used, a q8 KV dtype. Every CUDA call is checked (CudaError names the call and
// CUDA's message).
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/cuda/cuda_graphs.h"
#include "core/cuda/device_allocation.h"
#include "core/cuda/device_kv_mirror.h"
#include "core/cuda/device_weights.h"
#include "core/model/forward_options.h"
#include "core/model/forward_pass.h"
#include "core/model/forward_recipe.h"
#include "kernels/cpu/matmul/matmul.h"
#include "kernels/cuda/attention.h"
#include "kernels/cuda/gemm.h"

namespace inferscope {

class LlamaModel;

class CudaForward final : public ForwardPass {
 public:
  // Selects CUDA device `device` and uploads `weights` (the model's shapes; they may go once built).
  // Throws std::runtime_error when no such device is usable, std::invalid_argument for what the
  // kernels do not cover (named).
  CudaForward(const LlamaModel& model, const LlamaWeights& weights, const ForwardOptions& options, int32_t device);
  ~CudaForward() override;

  // Its matmul seconds are every GEMV and GEMM; a step replayed from a CUDA graph times neither. A
  // CUDA error in the step (gpu::CudaError, naming the call and CUDA's message) comes out as core's
  // DeviceFailure, "cuda:N: ...", which the engine answers by moving to the CPU.
  ForwardStats run(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention, ThreadPool& pool,
                   std::vector<float>& logits, int32_t layers = 0) override;
  std::optional<DeviceMemory> device_memory() const override;
  // Decode steps from CUDA graphs (on unless INFERSCOPE_CUDA_GRAPHS=0 was set at construction).
  void set_cuda_graphs(bool on) { graphs_on_ = on; }
  size_t graph_captures() const { return graphs_.captures(); }
  size_t graph_replays() const { return graphs_.replays(); }

 private:
  // run() on the device; CUDA errors come out as gpu::CudaError.
  ForwardStats run_on_device(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention,
                             std::vector<float>& logits, int32_t layers);
  struct Timer;  // CUDA event pairs around attention and matmuls
  // One attention call of the step: its layer, shape, plan, and its header's place in attention_headers_.
  struct PlannedAttention {
    int32_t layer;
    gpu::DeviceAttentionShape shape;
    gpu::AttentionPlan plan;
    size_t header_at;
  };
  void bind(KvCache& kv);  // a device mirror for a cache not seen before
  void upload_step(std::span<const BatchSeq> batch, const KvCache& kv, int32_t n_layers);
  void reserve_activations(int64_t n_tok, int64_t n_logits);
  // Every layer's attention calls planned, their headers uploaded in one copy, their scratch reserved;
  // returns the scratch of the largest call.
  size_t plan_attention(std::span<const BatchSeq> batch, const KvCache& kv, int32_t n_layers, bool naive);
  // The step's launches, reading only the buffers prepared above (no host copy, no allocation but
  // the GEMM's scratch for prefill, which is never captured).
  void enqueue(std::span<const BatchSeq> batch, int32_t n_layers, DType kv_dtype);
  // y = W x for the step's rows, rows[i] of them from batch sequence i: each run of sequences with
  // more than 8 rows in one GEMM, the other runs in GEMV chunks of at most 8 rows; timed as matmul.
  void matmul(const gpu::DeviceMatrix& w, const float* x, std::span<const int64_t> rows, float* y);
  void attend(int32_t layer);  // the layer's planned attention calls, timed as attention
  // `a` grown to `bytes`; the launches read it at its address, so when it moves the graphs go.
  void reserve(DeviceAllocation& a, size_t bytes);
  // What a decode step's launch parameters depend on, besides the buffers' addresses.
  CudaGraphs::Key graph_key(int32_t n_layers) const;

  const LlamaModel& model_;
  ForwardRecipe recipe_;  // the steps enqueue walks
  const int32_t device_;  // the CUDA device (cudaSetDevice's number)
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<DeviceWeights> weights_;
  const KvCache* bound_ = nullptr;       // the cache mirror_ mirrors
  std::vector<KvRegion> mirror_regions_;  // and its regions then
  std::shared_ptr<DeviceKvMirror> mirror_;
  std::unique_ptr<Timer> timer_;
  CudaGraphs graphs_;
  bool graphs_on_ = true;
  std::optional<gpu::CublasHandle> cublas_;  // made once the device is selected
  // Activations of the step, (tokens, width) row-major, and the step's tables.
  DeviceAllocation x_, xb_, delta_, q_, k_, v_, att_, gate_, up_, last_, logits_, attention_scratch_, gemm_scratch_;
  DeviceAllocation tokens_, positions_, block_tables_, store_rows_, attention_headers_;
  std::vector<int32_t> host_tokens_, host_positions_, host_tables_;
  std::vector<size_t> table_offset_;       // per batch sequence: its block table's first entry in block_tables_
  std::vector<int64_t> token_rows_, logit_rows_;  // per batch sequence: its new tokens, its logits rows
  std::vector<uint8_t*> host_store_rows_;  // per layer: n_tok K rows then n_tok V rows (head 0)
  size_t store_head_stride_ = 0;           // bytes from one KV head's row to the next
  std::vector<gpu::DeviceAttentionSeq> prefill_, decode_;  // one layer's sequences by schedule, while planning
  std::vector<uint8_t> host_headers_;                      // every planned call's header, 256-byte aligned
  std::vector<PlannedAttention> attention_calls_;           // in layer order
};

}  // namespace inferscope
