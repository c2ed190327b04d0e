#include "gui/config/device_choices.h"

namespace inferscope::gui {

std::vector<DeviceChoice> device_choices(const GpuProbe& probe, bool cuda_built) {
  std::vector<DeviceChoice> choices{{"CPU", ComputeDevice{}, {}}};
  const QString not_built = "built without CUDA (configure with INFERSCOPE_CUDA=ON)";
  if (probe.gpus.empty()) {
    const QString why = cuda_built ? QString::fromStdString(probe.unavailable_reason) : not_built;
    choices.push_back({"CUDA", ComputeDevice{true, 0}, why.isEmpty() ? QString("no CUDA device found") : why});
    return choices;
  }
  for (const GpuInfo& gpu : probe.gpus) {
    choices.push_back({QString("CUDA:%1 — %2").arg(gpu.index).arg(QString::fromStdString(gpu.name)),
                       ComputeDevice{true, gpu.index}, cuda_built ? QString() : not_built});
  }
  return choices;
}

}  // namespace inferscope::gui
