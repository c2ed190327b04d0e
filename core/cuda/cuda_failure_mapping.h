// A CUDA forward pass as the engine sees it: a CUDA error in a step (gpu::CudaError, naming the call
// and CUDA's message) comes out as core's DeviceFailure, which the engine answers by moving to the
// CPU; everything else passes through unchanged.
#pragma once
#include <memory>
#include <string>

#include "core/model/forward_pass.h"

namespace inferscope {

class CudaFailureMapping final : public ForwardPass {
 public:
  // `device` ("cuda:N") prefixes the failure's message.
  CudaFailureMapping(std::unique_ptr<ForwardPass> inner, std::string device)
      : inner_(std::move(inner)), device_(std::move(device)) {}

  ForwardStats run(std::span<const BatchSeq> batch, KvCache& kv, Attention& attention, ThreadPool& pool,
                   std::vector<float>& logits, int32_t layers = 0) override;
  std::optional<DeviceMemory> device_memory() const override { return inner_->device_memory(); }

 private:
  std::unique_ptr<ForwardPass> inner_;
  std::string device_;
};

}  // namespace inferscope
