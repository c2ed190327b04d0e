#include "kernels/cuda/ops.h"

namespace inferscope::gpu {

bool weight_type_supported(DType type) {
  return type == DType::F32 || type == DType::F16 || type == DType::Q8_0 || type == DType::Q4_0 || type == DType::Q4_1;
}

}  // namespace inferscope::gpu
