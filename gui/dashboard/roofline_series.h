// The roofline's data (plain, no widgets): each engine step's arithmetic intensity (FLOPs per byte
// read: weights + K/V, core/engine/step_cost.h) and achieved FLOP/s (FLOPs / duration), and the
// machine's two roofs, measured: memory (read bandwidth x intensity) and compute (the peak FLOP/s),
// which meet at the ridge point.
#pragma once
#include <cstdint>
#include <vector>

#include "core/engine/engine_metrics.h"

namespace inferscope::gui {

struct MachineRoofs {
  double peak_flops_per_second = 0;  // the compute roof (kernels/cpu/peak_flops.h)
  double read_bytes_per_second = 0;  // the memory roof's slope (kernels/cpu/memory_bandwidth.h)

  bool known() const { return peak_flops_per_second > 0 && read_bytes_per_second > 0; }
  // FLOPs per byte where the roofs meet: below it a step cannot reach the peak, whatever its code.
  double ridge_intensity() const { return peak_flops_per_second / read_bytes_per_second; }
  // The most FLOP/s a step of `intensity` can reach on this machine: min(bandwidth x intensity, peak).
  double attainable(double intensity) const;
};

struct RooflinePoint {
  double intensity = 0;         // FLOPs per byte read
  double flops_per_second = 0;  // achieved
  size_t step = 0;              // index into the snapshot's steps
  bool prefill = false;         // the step computed prompt tokens (else it only decoded)
};

// One point per step that counted FLOPs, bytes and time (steps of a model-free dry run have none).
std::vector<RooflinePoint> roofline_points(const EngineMetricsSnapshot& s);

}  // namespace inferscope::gui
