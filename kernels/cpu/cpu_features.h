// What this CPU offers, read once at run time.
#pragma once
#include <string>

namespace inferscope {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512vl = false;
  bool avx512bw = false;
  bool avx512vnni = false;
  int hardware_threads = 1;
  std::string model_name;  // from /proc/cpuinfo when available

  // What each kernel build needs: AVX2 + FMA + F16C, and for the AVX-512VL builds AVX-512F/VL too.
  bool runs_avx2_kernels() const { return avx2 && fma && f16c; }
  bool runs_avx512vl_kernels() const { return runs_avx2_kernels() && avx512f && avx512vl; }
  // The int8 packed-row kernels' AVX-512 build also needs VNNI (vpdpbusd) and BW (512-bit byte operations).
  bool runs_avx512vnni_kernels() const { return runs_avx512vl_kernels() && avx512bw && avx512vnni; }
};

const CpuFeatures& cpu_features();

// Whether the environment variable `name` is set to "1" (the kernels' switches for before/after
// measurements).
bool env_is_one(const char* name);

// True when the AVX2 kernels may run (AVX2 + FMA + F16C), unless INFERSCOPE_FORCE_SCALAR=1
// (the environment is read once, at the first call).
bool use_avx2();

// True when the AVX-512VL builds of the kernels may run (use_avx2() and AVX-512F/VL, with the OS
// saving their registers), unless INFERSCOPE_NO_AVX512=1 (read once, at the first call).
bool use_avx512vl();

// One line for `devices`: the kernel builds that run here (scalar, AVX2, the packed-row matmuls' AVX-512
// builds, and whether their int8 build uses VNNI).
std::string describe_kernels_in_use();

}  // namespace inferscope
