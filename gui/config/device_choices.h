// What the config panel's device toggle offers: the CPU, and one entry per CUDA device the probe
// found ("CUDA:N — name"), each usable or not with the reason; a single "CUDA" entry saying why
// when none was found.
#pragma once
#include <QString>
#include <vector>

#include "core/device/device_probe.h"
#include "core/model/compute_device.h"

namespace inferscope::gui {

struct DeviceChoice {
  QString label;
  ComputeDevice device;
  QString unavailable;  // why it cannot be chosen ("" when it can)
};

// `probe` as probe_gpus() gives it; `cuda_built`: this build has the CUDA forward pass.
std::vector<DeviceChoice> device_choices(const GpuProbe& probe, bool cuda_built);

}  // namespace inferscope::gui
