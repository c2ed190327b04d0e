#include "core/cli/bench_backend.h"

#include "kernels/cpu/cpu_features.h"

namespace inferscope::cli {

std::string bench_backend(std::string_view device, const EngineConfig& config) {
  // the packed-row quantized matmuls run their AVX-512VL build where the CPU has one (same bits)
  const std::string cpu = !use_avx2() ? "CPU scalar" : use_avx512vl() ? "CPU AVX2+AVX-512VL" : "CPU AVX2";
  const std::string where = device.starts_with("cuda") ? "CUDA " + std::string(device) : cpu;
  const std::string activations = config.forward.matmul.activations == ActivationPrecision::Q8 ? "q8" : "f32";
  return where + " act " + activations +
         (config.quant == WeightQuant::Native ? "" : " weights " + std::string(weight_quant_name(config.quant)));
}

}  // namespace inferscope::cli
