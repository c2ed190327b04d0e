// inferscope-cli devices: the CPU features the kernels use, and any CUDA device.
#include <iostream>

#include "core/cli/args.h"
#include "core/cli/commands.h"
#include "core/device/device_probe.h"
#include "kernels/cpu/cpu_features.h"

namespace inferscope::cli {

int cmd_devices(int argc, char** argv) {
  if (print_help_if_asked("devices", {}, argc, argv)) return 0;
  const Args args({}, argc, argv, 2);
  const CpuFeatures& cpu = cpu_features();
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  std::cout << "CPU: " << (cpu.model_name.empty() ? "unknown model" : cpu.model_name) << "\n"
            << "  threads " << cpu.hardware_threads << ", AVX2 " << yes(cpu.avx2) << ", FMA " << yes(cpu.fma)
            << ", F16C " << yes(cpu.f16c) << ", AVX-512F " << yes(cpu.avx512f) << "\n"
            << "  kernels in use: " << (use_avx2() ? "AVX2/FMA/F16C" : "scalar") << "\n";
  const GpuProbe probe = probe_gpus();
  if (!cuda_compiled_in()) {
    std::cout << "CUDA: not usable: this build has no CUDA backend (INFERSCOPE_CUDA=OFF)";
    if (!probe.gpus.empty()) std::cout << "; the driver sees " << probe.gpus.size() << " GPU(s)";
    std::cout << "\n";
  } else if (probe.gpus.empty()) {
    std::cout << "CUDA: not usable: " << probe.unavailable_reason << "\n";
  }
  for (const GpuInfo& g : probe.gpus) {
    std::cout << "CUDA device " << g.index << ": " << g.name << ", " << g.memory_bytes / (1024 * 1024) << " MiB, compute "
              << g.compute_major << "." << g.compute_minor << "\n";
  }
  return 0;
}

}  // namespace inferscope::cli
