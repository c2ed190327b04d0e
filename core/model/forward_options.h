// How a forward pass computes. The engine hands the same options to every forward pass it builds,
// the target's and a model draft's alike (forward_maker.h); an option on the forward pass is a
// field here, beside the matmuls' own options.
#pragma once
#include "kernels/cpu/matmul/matmul.h"

namespace inferscope {

struct ForwardOptions {
  MatmulOptions matmul;  // how activations meet quantized weights, which kernels, operator fusion
};

}  // namespace inferscope
