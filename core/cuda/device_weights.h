// A model's weights in device memory, uploaded once: matrices in their stored format where the CUDA
// GEMV reads it (F32, F16, Q8_0, Q4_0, Q4_1), every other type dequantized to F16 on the way; norms
// and biases as f32. A tied output head shares the embedding's upload.
#pragma once
#include <map>
#include <vector>

#include "core/cuda/device_allocation.h"
#include "core/model/model_config.h"
#include "core/model/llama_weights.h"
#include "kernels/cuda/ops.h"

namespace inferscope {

struct DeviceLayerWeights {
  const float* attn_norm = nullptr;
  const float* ffn_norm = nullptr;
  const float* q_norm = nullptr;  // qwen3: per-head Q/K norms, else null
  const float* k_norm = nullptr;
  gpu::DeviceMatrix wq, wk, wv, wo, w_gate, w_up, w_down;
};

class DeviceWeights {
 public:
  DeviceWeights(const LlamaConfig& config, const LlamaWeights& weights);

  gpu::DeviceMatrix token_embd, output;
  const float* output_norm = nullptr;
  const float* rope_freq_factors = nullptr;  // rope_dim / 2 values, or null
  std::vector<DeviceLayerWeights> layers;
  size_t bytes() const { return bytes_; }

 private:
  gpu::DeviceMatrix upload(const MatrixRef& m);
  const float* upload(const float* host, int64_t n);  // null stays null

  std::vector<DeviceAllocation> allocations_;
  std::map<const void*, gpu::DeviceMatrix> uploaded_;  // by host data: a tied head is uploaded once
  size_t bytes_ = 0;
};

}  // namespace inferscope
