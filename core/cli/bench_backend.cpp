#include "core/cli/bench_backend.h"

#include "core/engine/setting_table.h"
#include "kernels/cpu/cpu_features.h"

namespace inferscope::cli {

std::string bench_backend(std::string_view device, const EngineConfig& config) {
  // the packed-row quantized matmuls run their AVX-512VL build where the CPU has one (same bits)
  const std::string cpu = !use_avx2() ? "CPU scalar" : use_avx512vl() ? "CPU AVX2+AVX-512VL" : "CPU AVX2";
  const std::string where = device.starts_with("cuda") ? "CUDA " + std::string(device) : cpu;
  // the activations and the weights as the setting table names them ("weights q8"; nothing when native)
  const std::string weights = find_setting("quant")->summary(config);
  return where + " act " + find_setting("activations")->get(config) + (weights.empty() ? "" : " " + weights);
}

}  // namespace inferscope::cli
