#include "core/cli/measured_profile.h"

#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/common/text_format.h"
#include "core/servesim/dry_run_executor.h"

namespace inferscope::cli {

nlohmann::json measured_device_profile(const RooflineRow& tg, int64_t n_gen, const PeakFlopsResult& peak,
                                       const BandwidthResult& bandwidth, int n_threads) {
  const RooflineDevice roofs{bandwidth.read_bytes_per_second, peak.flops_per_second, 0};
  const double step_s = tg.seconds / static_cast<double>(n_gen);
  const double roofline_step_s = roofs.seconds(tg.cost.flops(), tg.cost.bytes()) / static_cast<double>(n_gen);
  const double overhead_s = std::max(0.0, step_s - roofline_step_s);
  const double ram_bytes = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  const std::string threads = std::to_string(n_threads) + " threads";
  return {{"name", "this machine, measured (" + threads + ")"},
          {"kind", "roofline"},
          {"memory_bandwidth_gb_s", bandwidth.read_bytes_per_second / 1e9},
          {"peak_tflops", peak.flops_per_second / 1e12},
          {"memory_gib", ram_bytes / (1024.0 * 1024.0 * 1024.0)},
          {"step_overhead_us", overhead_s * 1e6},
          {"sources",
           {"memory_bandwidth_gb_s: inferscope-cli bench's read-bandwidth probe (" +
                format_number(static_cast<double>(bandwidth.buffer_bytes) / (1 << 20), "%.0f") + " MiB buffer, best of " +
                std::to_string(bandwidth.repetitions) + ", " + threads + ")",
            "peak_tflops: bench's FMA-chain probe (" + std::string(peak.kernel) + ", " + threads + ")",
            "step_overhead_us: bench's " + tg.test + " test, " + format_number(step_s * 1e3, "%.3f") +
                " ms per decode step, less the " + format_number(roofline_step_s * 1e3, "%.3f") +
                " ms the two roofs give its FLOPs and bytes",
            "memory_gib: the machine's physical memory (sysconf)"}}};
}

}  // namespace inferscope::cli
