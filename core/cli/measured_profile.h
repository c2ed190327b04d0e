// bench --device-profile-out PATH: this machine as a roofline device profile (resources/devices'
// format), from the roofs bench measures and its tg test's step time, so serve-sim --dry-run
// --device-profile PATH can be checked against the steps this machine really takes.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/cli/bench_roofline.h"

namespace inferscope::cli {

// The profile: memory_bandwidth_gb_s and peak_tflops as measured; step_overhead_us what the tg test's
// mean step took beyond the roofline's time for its FLOPs and bytes (at least 0); memory_gib the
// machine's RAM; each figure's source names the measurement. `tg`: the tg row of roofline_rows().
nlohmann::json measured_device_profile(const RooflineRow& tg, int64_t n_gen, const PeakFlopsResult& peak,
                                       const BandwidthResult& bandwidth, int n_threads);

}  // namespace inferscope::cli
