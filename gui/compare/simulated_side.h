// A simulated device as one side of an A/B comparison: the local engine's configuration run as a dry
// run (WorkloadRunOptions::dry_run) over the loaded model's shapes, each step priced on a device
// profile (resources/devices/*.json) on a virtual clock. The scheduler, KV manager and batching run
// for real; no forward pass runs, so the generated tokens are placeholders and attention is not measured.
#pragma once
#include <QString>
#include <optional>
#include <vector>

#include "core/engine/engine_config.h"
#include "core/workload/workload_runner.h"
#include "core/servesim/device_profile.h"
#include "core/sched/request.h"

namespace inferscope {
class LlamaModel;
}

namespace inferscope::gui {

struct SimulatedSide {
  EngineConfig config;
  DeviceProfile device;
};

// A device file and what reading it gave: its profile, or why it could not be read.
struct DeviceFile {
  QString path;
  std::optional<DeviceProfile> profile;
  QString error;  // set when profile is not
};

// Every *.json in `dir`, by file name; a file that fails to read comes with its error.
std::vector<DeviceFile> device_files(const QString& dir);
// The shipped devices (resources/devices). Needs the QApplication.
std::vector<DeviceFile> builtin_devices();

// How a dry run prices steps on `device`: its roofline, else its linear costs.
DryRunPricing device_pricing(const DeviceProfile& device);

// run_workload of `side.config` as a dry run priced on `side.device`; its simulated_on is the device's
// name, and its metrics' not_reported lists the attention panel (a dry run measures none).
// Throws std::invalid_argument for a configuration a dry run cannot run (speculative decoding).
WorkloadResult run_simulated_side(const LlamaModel& model, const SimulatedSide& side, const std::vector<Request>& requests,
                                  WorkloadRunOptions options);

}  // namespace inferscope::gui
