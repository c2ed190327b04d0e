// The machine's two roofs for the roofline, measured on this process's first EngineBridge worker
// before its first model load (no engine competes for the cores then): the peak FMA rate
// (kernels/cpu/peak_flops.h, about kPeakFlopsSeconds) and the read bandwidth over a buffer far
// larger than the caches (kernels/cpu/memory_bandwidth.h).
#pragma once
#include <cstddef>

namespace inferscope::gui {

inline constexpr double kPeakFlopsSeconds = 0.2;
inline constexpr size_t kBandwidthBufferBytes = size_t{256} << 20;
inline constexpr int kBandwidthPasses = 3;

struct MachineMeasurement {
  double peak_flops_per_second = 0;
  double read_bytes_per_second = 0;
  int threads = 0;  // the pool both ran on
};

// The first call measures on a pool of `threads` (0: every hardware thread) and blocks while it does
// (about half a second: call it on a worker); every later call, from any thread, returns its result.
MachineMeasurement measure_machine_once(int threads);

}  // namespace inferscope::gui
