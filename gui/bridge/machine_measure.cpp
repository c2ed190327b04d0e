#include "gui/bridge/machine_measure.h"

#include <mutex>
#include <optional>

#include "kernels/cpu/memory_bandwidth.h"
#include "kernels/cpu/peak_flops.h"
#include "kernels/cpu/thread_pool.h"

namespace inferscope::gui {

MachineMeasurement measure_machine_once(int threads) {
  static std::mutex mu;
  static std::optional<MachineMeasurement> measured;
  // Held while measuring: a second bridge's worker waits for the same numbers instead of competing.
  std::lock_guard lock(mu);
  if (!measured) {
    ThreadPool pool(threads);
    MachineMeasurement m;
    m.peak_flops_per_second = measure_peak_flops(pool, kPeakFlopsSeconds).flops_per_second;
    m.read_bytes_per_second = measure_read_bandwidth(pool, kBandwidthBufferBytes, kBandwidthPasses).read_bytes_per_second;
    m.threads = pool.size();
    measured = m;
  }
  return *measured;
}

}  // namespace inferscope::gui
