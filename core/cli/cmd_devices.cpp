// inferscope-cli devices: the CPU features the kernels use, and the CUDA devices --device cuda:N can run on.
#include <iostream>

#include "core/cli/args.h"
#include "core/cli/commands.h"
#include "core/device/device_probe.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/large_pages.h"

namespace inferscope::cli {

int cmd_devices(int argc, char** argv) {
  if (print_help_if_asked("devices", {}, argc, argv)) return 0;
  const Args args({}, argc, argv, 2);
  const CpuFeatures& cpu = cpu_features();
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  std::cout << "CPU: " << (cpu.model_name.empty() ? "unknown model" : cpu.model_name) << "\n"
            << "  threads " << cpu.hardware_threads << ", AVX2 " << yes(cpu.avx2) << ", FMA " << yes(cpu.fma)
            << ", F16C " << yes(cpu.f16c) << ", AVX-512F " << yes(cpu.avx512f) << ", AVX-512VL " << yes(cpu.avx512vl)
            << ", AVX-512 VNNI " << yes(cpu.avx512vnni)
            << "\n"
            << "  kernels in use: " << describe_kernels_in_use() << "\n"
            << "  packed weight rows: " << describe_large_pages() << "\n";
  std::cout << "Engine: runs on the CPU by default; --device cuda[:N] runs the forward pass on a CUDA device "
               "(CUDA builds only; not yet validated on a GPU in this repository's CI)\n";
  std::cout << "CUDA support in this build: "
            << (cuda_compiled_in() ? "yes (INFERSCOPE_CUDA=ON)" : "no (INFERSCOPE_CUDA=OFF): --device cuda is refused")
            << "\n";
  const GpuProbe probe = probe_gpus();
  if (!probe.runtime_version.empty()) {
    std::cout << "CUDA runtime " << probe.runtime_version << ", driver supports CUDA "
              << (probe.driver_version.empty() ? "unknown (no driver)" : probe.driver_version) << "\n";
  }
  if (probe.gpus.empty()) std::cout << "CUDA devices: none: " << probe.unavailable_reason << "\n";
  for (const GpuInfo& g : probe.gpus) {
    std::cout << "CUDA device " << g.index << ": " << g.name << ", " << g.memory_bytes / (1024 * 1024) << " MiB, compute "
              << g.compute_major << "." << g.compute_minor << "\n";
  }
  return 0;
}

}  // namespace inferscope::cli
