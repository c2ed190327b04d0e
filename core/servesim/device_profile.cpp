#include "core/servesim/device_profile.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/common/json_field.h"
#include "core/common/data_file.h"

namespace inferscope {
namespace {

// A positive number field, scaled to SI units.
double positive(const nlohmann::json& j, const char* key, const std::string& where, double scale) {
  const double v = json_field<double>(j, key, where);
  if (!(v > 0)) throw std::runtime_error(where + ": field '" + key + "' must be positive, not " + j.at(key).dump());
  return v * scale;
}

}  // namespace

DeviceProfile read_device_profile(const std::string& path) {
  return device_profile_from_json(read_json_object(path, "device profile"), path);
}

DeviceProfile device_profile_from_json(const nlohmann::json& j, const std::string& path) {
  DeviceProfile d;
  d.name = json_field<std::string>(j, "name", path);
  d.sources = json_field<std::vector<std::string>>(j, "sources", path);
  const std::string kind = json_field<std::string>(j, "kind", path);
  if (kind == "linear") {
    d.linear = DryRunCost{json_field<double>(j, "step_fixed_ms", path) * 1e-3,
                          json_field<double>(j, "step_per_token_ms", path) * 1e-3};
    if (d.linear->fixed_s < 0 || d.linear->per_token_s < 0 || d.linear->fixed_s + d.linear->per_token_s <= 0) {
      throw std::runtime_error(path + ": step_fixed_ms and step_per_token_ms must be >= 0 and not both 0");
    }
  } else if (kind == "roofline") {
    d.roofline = RooflineDevice{positive(j, "memory_bandwidth_gb_s", path, 1e9), positive(j, "peak_tflops", path, 1e12),
                                json_field<double>(j, "step_overhead_us", path) * 1e-6};
    if (d.roofline->step_overhead_s < 0) throw std::runtime_error(path + ": field 'step_overhead_us' must be >= 0");
  } else {
    throw std::runtime_error(path + ": field 'kind' must be \"linear\" or \"roofline\", not \"" + kind + "\"");
  }
  if (j.contains("memory_gib")) d.memory_bytes = positive(j, "memory_gib", path, 1024.0 * 1024.0 * 1024.0);
  if (j.contains("link")) {
    d.link_name = json_field<std::string>(j, "link", path);
    d.link = DeviceLink{positive(j, "link_bandwidth_gb_s", path, 1e9), positive(j, "link_latency_us", path, 1e-6)};
  }
  return d;
}

std::string device_profile_path(const std::string& name_or_path) { return data_file_path("devices", name_or_path); }

}  // namespace inferscope
