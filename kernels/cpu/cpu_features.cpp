#include "kernels/cpu/cpu_features.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

namespace inferscope {
namespace {

// The "model name" line of /proc/cpuinfo, or "" where there is none.
std::string read_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.f16c = __builtin_cpu_supports("f16c");
  f.avx512f = __builtin_cpu_supports("avx512f");  // libgcc also checks that the OS saves the state
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vnni = __builtin_cpu_supports("avx512vnni");
#endif
  const unsigned threads = std::thread::hardware_concurrency();
  f.hardware_threads = threads == 0 ? 1 : static_cast<int>(threads);
  f.model_name = read_model_name();
  return f;
}

}  // namespace

bool env_is_one(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::strcmp(value, "1") == 0;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

bool use_avx2() {
  // decided once (the environment is read at the first call): hot loops ask on every call
  static const bool avx2 = !env_is_one("INFERSCOPE_FORCE_SCALAR") && cpu_features().runs_avx2_kernels();
  return avx2;
}

bool use_avx512vl() {
  static const bool avx512vl = use_avx2() && !env_is_one("INFERSCOPE_NO_AVX512") && cpu_features().runs_avx512vl_kernels();
  return avx512vl;
}

std::string describe_kernels_in_use() {
  if (!use_avx2()) return "scalar";
  if (!use_avx512vl()) return "AVX2/FMA/F16C";
  return std::string("AVX2/FMA/F16C; the packed-row quantized matmuls built for AVX-512VL, ") +
         (cpu_features().runs_avx512vnni_kernels() ? "their int8 kernels with VNNI"
                                                   : "their int8 kernels as AVX2 (no AVX-512 VNNI here)");
}

}  // namespace inferscope
