#include "gui/compare/simulated_side.h"

#include <QDir>
#include <stdexcept>

#include "core/engine/step_metrics.h"
#include "gui/bridge/resource_path.h"

namespace inferscope::gui {

std::vector<DeviceFile> device_files(const QString& dir) {
  const QDir folder(dir);
  std::vector<DeviceFile> files;
  for (const QString& name : folder.entryList({"*.json"}, QDir::Files, QDir::Name)) {
    DeviceFile file{folder.filePath(name), std::nullopt, {}};
    try {
      file.profile = read_device_profile(file.path.toStdString());
    } catch (const std::exception& e) {
      file.error = QString::fromStdString(e.what());
    }
    files.push_back(std::move(file));
  }
  return files;
}

std::vector<DeviceFile> builtin_devices() { return device_files(resolve_resource_path("resources/devices")); }

DryRunPricing device_pricing(const DeviceProfile& device) {
  if (device.roofline) return *device.roofline;
  if (device.linear) return *device.linear;
  throw std::invalid_argument(device.name + " has neither a roofline nor linear step costs");
}

WorkloadResult run_simulated_side(const LlamaModel& model, const SimulatedSide& side, const std::vector<Request>& requests,
                                  WorkloadRunOptions options) {
  options.dry_run = device_pricing(side.device);
  WorkloadResult result = run_workload(model, side.config, requests, options);
  result.simulated_on = side.device.name;
  // No forward pass ran: the attention panel's scratch and times read 0 because nothing was measured.
  for (std::string& key : step_metrics_drawn_on("attention")) result.metrics.not_reported.push_back(std::move(key));
  return result;
}

}  // namespace inferscope::gui
