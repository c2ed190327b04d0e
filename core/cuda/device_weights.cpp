#include "core/cuda/device_weights.h"

#include "kernels/format/quant_blocks.h"
#include "kernels/cpu/quantize.h"

namespace inferscope {

DeviceWeights::DeviceWeights(const LlamaConfig& c, const LlamaWeights& w) {
  token_embd = upload(w.token_embd);
  output = upload(w.output);
  output_norm = upload(w.output_norm, c.dim);
  rope_freq_factors = upload(w.rope_freq_factors, c.rope_dim / 2);
  for (const LlamaLayerWeights& lw : w.layers) {
    DeviceLayerWeights d;
    d.attn_norm = upload(lw.attn_norm, c.dim);
    d.ffn_norm = upload(lw.ffn_norm, c.dim);
    d.q_norm = upload(lw.q_norm, c.head_dim);
    d.k_norm = upload(lw.k_norm, c.head_dim);
    d.wq = upload(lw.wq);
    d.wk = upload(lw.wk);
    d.wv = upload(lw.wv);
    d.wo = upload(lw.wo);
    d.w_gate = upload(lw.w_gate);
    d.w_up = upload(lw.w_up);
    d.w_down = upload(lw.w_down);
    layers.push_back(d);
  }
}

gpu::DeviceMatrix DeviceWeights::upload(const MatrixRef& m) {
  if (const auto it = uploaded_.find(m.data); it != uploaded_.end()) return it->second;
  gpu::DeviceMatrix d{m.type, nullptr, m.rows, m.cols, m.row_stride};
  std::vector<uint8_t> converted;
  const void* host = m.data;
  if (!gpu::weight_type_supported(m.type)) {
    // a type the GEMV does not read: each row dequantized, then stored as F16
    d.type = DType::F16;
    d.row_stride = static_cast<size_t>(m.cols) * sizeof(f16_bits);
    converted.resize(d.row_stride * static_cast<size_t>(m.rows));
    std::vector<float> row(static_cast<size_t>(m.cols));
    for (int64_t r = 0; r < m.rows; ++r) {
      dequantize_row(m.type, static_cast<const uint8_t*>(m.data) + m.row_stride * r, row.data(), m.cols);
      auto* out = reinterpret_cast<f16_bits*>(converted.data() + d.row_stride * r);
      for (int64_t i = 0; i < m.cols; ++i) out[i] = f32_to_fp16(row[static_cast<size_t>(i)]);
    }
    host = converted.data();
  }
  const size_t bytes = d.row_stride * static_cast<size_t>(m.rows);
  allocations_.emplace_back(bytes);
  INFERSCOPE_CUDA_CHECK(cudaMemcpy(allocations_.back().get(), host, bytes, cudaMemcpyHostToDevice));
  bytes_ += bytes;
  d.data = allocations_.back().get();
  uploaded_.emplace(m.data, d);
  return d;
}

const float* DeviceWeights::upload(const float* host, int64_t n) {
  if (host == nullptr) return nullptr;
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  allocations_.emplace_back(bytes);
  INFERSCOPE_CUDA_CHECK(cudaMemcpy(allocations_.back().get(), host, bytes, cudaMemcpyHostToDevice));
  bytes_ += bytes;
  return allocations_.back().get<float>();
}

}  // namespace inferscope
