// Builds the forward pass for a device: LlamaForward on the CPU, CudaForward on a CUDA device. Never
// falls back: asking for CUDA where it cannot run throws, saying why.
#pragma once
#include <functional>
#include <memory>

#include "core/model/compute_device.h"
#include "core/model/forward_maker.h"
#include "core/model/forward_pass.h"

namespace inferscope {

class LlamaModel;
struct LlamaWeights;

// Throws std::runtime_error "--device cuda: this build has no CUDA support (INFERSCOPE_CUDA=OFF)" or
// "--device cuda:N: no CUDA device: REASON", and std::invalid_argument naming what the CUDA forward
// pass does not cover (an architecture feature, a weight type, q8 activations). A CUDA forward pass
// throws DeviceFailure from run() when a CUDA call fails.
std::unique_ptr<ForwardPass> make_forward(const LlamaModel& model, const LlamaWeights& weights,
                                          const ForwardOptions& options, const ComputeDevice& device);

}  // namespace inferscope
