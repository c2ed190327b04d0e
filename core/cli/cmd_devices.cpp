// inferscope-cli devices: the CPU features the kernels use, and any CUDA device (which the engine does not use yet).
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
  std::cout << "Engine: runs on the CPU; it does not use the GPU yet (there is no CUDA executor)\n";
  std::cout << "CUDA toolkit at build time: "
            << (cuda_compiled_in() ? "found (INFERSCOPE_CUDA=ON; nothing is compiled for the GPU yet)"
                                   : "not checked (INFERSCOPE_CUDA=OFF)")
            << "\n";
  const GpuProbe probe = probe_gpus();
  if (probe.gpus.empty()) std::cout << "CUDA devices: none: " << probe.unavailable_reason << "\n";
  for (const GpuInfo& g : probe.gpus) {
    std::cout << "CUDA device " << g.index << ": " << g.name << ", " << g.memory_bytes / (1024 * 1024) << " MiB, compute "
              << g.compute_major << "." << g.compute_minor << " (not used by the engine)\n";
  }
  return 0;
}

}  // namespace inferscope::cli
