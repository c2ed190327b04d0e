// Tensor parallelism in a dry run, as vLLM shards a Llama model (Megatron-style): each of N devices
// holds 1/N of every weight matrix (its share of the heads, FFN columns and vocabulary) and of every
// token's K/V, and does 1/N of each step's FLOPs. After the attention output projection and after the
// FFN down projection of every layer the devices sum their partial results with an all-reduce over
// the link between them.
#pragma once
#include <cstdint>

namespace inferscope {

// The link between a device and its peers (NVLink, PCIe): per-direction bandwidth and the latency
// of one collective operation.
struct DeviceLink {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};

struct TensorParallel {
  int32_t devices = 1;
  DeviceLink link;
  int32_t n_layers = 0;
  int32_t hidden_size = 0;
  double activation_bytes = 2;  // bf16 activations, as GPU serving runs them

  // One ring all-reduce of the step's activations (tokens x hidden_size x activation_bytes):
  // 2(N-1)/N x bytes / bandwidth + latency; 0 on one device.
  double all_reduce_seconds(double tokens) const;
  // A step's communication: two all-reduces per layer.
  double step_seconds(double tokens) const { return 2.0 * n_layers * all_reduce_seconds(tokens); }
};

// Throws std::invalid_argument naming the values unless `devices` >= 1 divides both the query heads
// and the KV heads (KV-head replication, which vLLM uses for more devices than KV heads, is not modelled).
void check_tensor_parallel(int32_t devices, int32_t heads, int32_t kv_heads);

}  // namespace inferscope
