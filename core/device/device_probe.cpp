#include "core/device/device_probe.h"

#include <dlfcn.h>

#ifdef INFERSCOPE_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace inferscope {
namespace {

#ifdef INFERSCOPE_HAVE_CUDA
// "13.0" from CUDA's 1000 * major + 10 * minor.
std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
#endif

// The few CUDA driver API entry points the probe needs (cuda.h's signatures, without linking it).
using CuInit = int (*)(unsigned);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetName = int (*)(char*, int, int);
using CuDeviceTotalMem = int (*)(size_t*, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);
constexpr int kAttrComputeMajor = 75, kAttrComputeMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*

}  // namespace

bool cuda_compiled_in() {
#ifdef INFERSCOPE_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

GpuProbe probe_gpus() {
  GpuProbe probe;
#ifdef INFERSCOPE_HAVE_CUDA
  // the runtime this build links, and the driver's version as the runtime reads it
  int version = 0;
  if (cudaRuntimeGetVersion(&version) == cudaSuccess) probe.runtime_version = cuda_version(version);
  if (cudaDriverGetVersion(&version) == cudaSuccess && version > 0) probe.driver_version = cuda_version(version);
#endif
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    probe.unavailable_reason = "no NVIDIA driver (libcuda.so.1 not found)";
    return probe;
  }
  auto init = reinterpret_cast<CuInit>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CuDeviceGetCount>(dlsym(lib, "cuDeviceGetCount"));
  auto get = reinterpret_cast<CuDeviceGet>(dlsym(lib, "cuDeviceGet"));
  auto name = reinterpret_cast<CuDeviceGetName>(dlsym(lib, "cuDeviceGetName"));
  auto mem = reinterpret_cast<CuDeviceTotalMem>(dlsym(lib, "cuDeviceTotalMem_v2"));
  auto attr = reinterpret_cast<CuDeviceGetAttribute>(dlsym(lib, "cuDeviceGetAttribute"));
  int n = 0;
  if (!init || !count || !get || !name || !mem || !attr) {
    probe.unavailable_reason = "the NVIDIA driver library lacks the expected entry points";
  } else if (int err = init(0); err != 0) {
    probe.unavailable_reason = "cuInit failed with CUDA error " + std::to_string(err) + " (no usable GPU or driver)";
  } else if (count(&n) != 0 || n == 0) {
    probe.unavailable_reason = "the NVIDIA driver reports no GPU";
  }
  for (int i = 0; probe.unavailable_reason.empty() && i < n; ++i) {
    int dev = 0;
    char buf[256] = {};
    GpuInfo g;
    g.index = i;
    if (get(&dev, i) != 0) continue;
    if (name(buf, sizeof(buf) - 1, dev) == 0) g.name = buf;
    mem(&g.memory_bytes, dev);
    attr(&g.compute_major, kAttrComputeMajor, dev);
    attr(&g.compute_minor, kAttrComputeMinor, dev);
    probe.gpus.push_back(g);
  }
  dlclose(lib);
  return probe;
}

}  // namespace inferscope
