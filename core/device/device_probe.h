// What compute devices this machine offers: CPU features, and NVIDIA GPUs found through the
// driver library at run time (so a CPU-only machine runs the same binary).
#pragma once
#include <string>
#include <vector>

namespace inferscope {

struct GpuInfo {
  int index = 0;
  std::string name;
  size_t memory_bytes = 0;
  int compute_major = 0, compute_minor = 0;
};

struct GpuProbe {
  std::vector<GpuInfo> gpus;
  std::string driver_version;   // "13.0" (the CUDA version the driver supports), "" when unknown
  std::string runtime_version;  // the CUDA runtime this build links, "" without CUDA
  std::string unavailable_reason;  // why none is usable ("" when some are)
};

bool cuda_compiled_in();
GpuProbe probe_gpus();

}  // namespace inferscope
