#include "core/executor/forward_factory.h"

#include <stdexcept>

#include "core/model/llama_forward.h"
#ifdef INFERSCOPE_HAVE_CUDA
#include "core/cuda/cuda_forward.h"
#endif

namespace inferscope {

std::unique_ptr<ForwardPass> make_forward(const LlamaModel& model, const LlamaWeights& weights,
                                          const ForwardOptions& options, const ComputeDevice& device) {
  if (!device.cuda) return std::make_unique<LlamaForward>(model, weights, options);
#ifdef INFERSCOPE_HAVE_CUDA
  return std::make_unique<CudaForward>(model, weights, options, device.index);
#else
  throw std::runtime_error("--device " + compute_device_name(device) +
                           ": this build has no CUDA support (INFERSCOPE_CUDA=OFF)");
#endif
}

}  // namespace inferscope
