#include "core/servesim/tensor_parallel.h"

#include <stdexcept>
#include <string>

namespace inferscope {

double TensorParallel::all_reduce_seconds(double tokens) const {
  if (devices <= 1) return 0;
  const double n = devices;
  const double message_bytes = tokens * hidden_size * activation_bytes;
  // A ring all-reduce sends and receives 2(N-1)/N of the message on each device's link.
  return 2.0 * (n - 1) / n * message_bytes / link.bandwidth_bytes_per_s + link.latency_s;
}

void check_tensor_parallel(int32_t devices, int32_t heads, int32_t kv_heads) {
  const std::string what = "tensor parallelism over " + std::to_string(devices) + " devices";
  if (devices < 1) throw std::invalid_argument(what + ": needs at least 1 device");
  if (heads % devices != 0) {
    throw std::invalid_argument(what + ": the model's " + std::to_string(heads) + " attention heads do not divide by " +
                                std::to_string(devices));
  }
  if (kv_heads % devices != 0) {
    throw std::invalid_argument(what + ": the model's " + std::to_string(kv_heads) + " KV heads do not divide by " +
                                std::to_string(devices) +
                                " (replicating KV heads over more devices than there are, as vLLM does, is not modelled)");
  }
}

}  // namespace inferscope
