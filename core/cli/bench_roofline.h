// bench --flops: the machine's two roofs (peak FLOP/s, read bandwidth) and where each pp/tg test
// lands between them: its arithmetic intensity (FLOPs per byte read, core/engine/step_cost.h), the
// FLOP/s it achieved and the most the roofline allows at that intensity.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/engine/step_cost.h"
#include "kernels/cpu/memory_bandwidth.h"
#include "kernels/cpu/peak_flops.h"

namespace inferscope::cli {

struct RooflineTest {
  std::string test;                 // "pp512", "tg128"
  int64_t n_prompt = 0, n_gen = 0;  // one of them is 0
  double tokens_per_second = 0;     // the test's measured mean
};

struct RooflineRow {
  std::string test;
  StepCost cost;                 // the whole test
  double seconds = 0;            // the test's time at its measured speed
  double achieved_flops = 0;     // cost.flops() / seconds
  double attainable_flops = 0;   // min(peak, bandwidth x intensity)
};

// `chunk`: prefill tokens per step (the engine's max_batch_tokens; 0: the whole prompt at once).
std::vector<RooflineRow> roofline_rows(const std::vector<RooflineTest>& tests, const StepCostModel& model, int32_t chunk,
                                       const PeakFlopsResult& peak, const BandwidthResult& bandwidth);
nlohmann::json roofline_json(const RooflineRow& row, const PeakFlopsResult& peak, const BandwidthResult& bandwidth);
void print_roofline(const std::vector<RooflineRow>& rows, const PeakFlopsResult& peak, const BandwidthResult& bandwidth);

}  // namespace inferscope::cli
