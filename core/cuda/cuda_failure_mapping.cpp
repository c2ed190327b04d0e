#include "core/cuda/cuda_failure_mapping.h"

#include "core/model/device_failure.h"
#include "kernels/cuda/cuda_check.h"

namespace inferscope {

ForwardStats CudaFailureMapping::run(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention,
                                     ThreadPool& pool, std::vector<float>& logits, int32_t layers) {
  try {
    return inner_->run(batch, kv, attention, pool, logits, layers);
  } catch (const gpu::CudaError& e) {
    throw DeviceFailure(device_ + ": " + e.what());
  }
}

}  // namespace inferscope
