#include "core/cli/device_fit.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/common/text_format.h"
#include "core/quant/quant_plan.h"

namespace inferscope::cli {
namespace {

std::string gib(double bytes) { return format_number(bytes / (1024.0 * 1024.0 * 1024.0), "%.2f") + " GiB"; }

}  // namespace

nlohmann::json DeviceFit::json() const {
  return {{"tensor_parallel", devices},
          {"weight_bytes_per_device", weights_per_device()},
          {"kv_budget_bytes_per_device", kv_per_device()},
          {"device_memory_bytes", memory_bytes > 0 ? nlohmann::json(memory_bytes) : nlohmann::json()},
          {"fits_device_memory", memory_bytes > 0 ? nlohmann::json(fits()) : nlohmann::json()}};
}

std::string DeviceFit::text() const {
  std::string s = "TP " + std::to_string(devices) + ": weights " + gib(weights_per_device()) + " + KV budget " +
                  gib(kv_per_device()) + " per device";
  if (memory_bytes > 0) s += " of " + gib(memory_bytes) + " memory (" + (fits() ? "fits" : "does not fit") + ")";
  return s;
}

TensorParallel tensor_parallel(const Args& args, const DeviceProfile& device, const LlamaConfig& config) {
  TensorParallel tp;
  tp.n_layers = config.n_layers;
  tp.hidden_size = config.dim;
  if (!args.has("--tensor-parallel")) return tp;
  tp.devices = static_cast<int32_t>(args.integer("--tensor-parallel", 1, 1, 1024));
  if (!args.has("--dry-run")) throw UsageError("--tensor-parallel splits the model of a --dry-run only");
  if (tp.devices == 1) return tp;
  if (!device.roofline) throw UsageError("--tensor-parallel needs a roofline --device-profile (h200, h100-sxm, ...)");
  if (!device.link) {
    throw UsageError("--tensor-parallel " + std::to_string(tp.devices) + ": the device profile '" + device.name +
                     "' gives no link (fields link, link_bandwidth_gb_s, link_latency_us)");
  }
  tp.link = *device.link;
  try {
    check_tensor_parallel(tp.devices, config.n_heads, config.n_kv_heads);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--tensor-parallel: ") + e.what());
  }
  return tp;
}

double weight_bytes_at(const LlamaModel& model, WeightQuant level) {
  if (!model.has_file()) return static_cast<double>(model.weights().matrix_bytes());
  double bytes = 0;
  for (const TensorFormat& t : plan_formats(model.file(), level)) bytes += static_cast<double>(t.bytes());
  return bytes;
}

void check_fits(const DeviceFit& fit, const std::string& device_name) {
  if (fit.memory_bytes == 0) return;
  const std::string n = std::to_string(fit.devices);
  if (fit.weight_bytes > fit.memory_bytes * fit.devices) {
    throw UsageError("the model's weights (" + gib(fit.weight_bytes) + ") exceed the memory of " + n + " x " +
                     device_name + " (" + n + " x " + gib(fit.memory_bytes) +
                     "): use more --tensor-parallel devices or a smaller weight format");
  }
  if (!fit.fits()) {
    throw UsageError("one device's share of the weights (" + gib(fit.weights_per_device()) + ") and of the KV budget (" +
                     gib(fit.kv_per_device()) + ") exceeds the memory of " + device_name + " (" +
                     gib(fit.memory_bytes) + "): lower --kv-budget-mib");
  }
}

}  // namespace inferscope::cli
