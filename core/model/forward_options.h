// How a forward pass computes. The engine hands the same options to every forward pass it builds,
// the target's and a model draft's alike (forward_maker.h); an option on the forward pass is a
// field here, beside the matmuls' own options, and its setting a row in forward_options.cpp.
#pragma once
#include <vector>

#include "core/common/setting_row.h"
#include "kernels/cpu/matmul/matmul.h"

namespace inferscope {

struct ForwardOptions {
  MatmulOptions matmul;  // how activations meet quantized weights, which kernels, operator fusion
};

// The options above as settings, in the Config panel's order (fixed when an engine is built).
std::vector<SettingRow<ForwardOptions>> forward_option_settings();

}  // namespace inferscope
