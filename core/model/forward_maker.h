// How forward passes are built: from a model, the weights it runs on, the forward options and the
// device it runs on. The engine builds every forward pass it runs, the drafts' included, with one
// such function (core/executor/forward_factory.h's make_forward; tests give their own).
#pragma once
#include <functional>
#include <memory>

#include "core/model/compute_device.h"
#include "core/model/forward_pass.h"
#include "core/model/forward_options.h"

namespace inferscope {

class LlamaModel;
struct LlamaWeights;

// Throws, saying why, when the device cannot run the model (never falls back to another device).
using ForwardMaker = std::function<std::unique_ptr<ForwardPass>(const LlamaModel&, const LlamaWeights&,
                                                                const ForwardOptions&, const ComputeDevice&)>;

}  // namespace inferscope
