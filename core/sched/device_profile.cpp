#include "core/sched/device_profile.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/common/json_field.h"

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
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the device profile");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object()) throw std::runtime_error(path + ": not a JSON object");
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
  return d;
}

std::string device_profile_path(const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json");
  if (is_path) return name_or_path;
  const std::filesystem::path relative = "resources/devices/" + name_or_path + ".json";
  if (std::filesystem::exists(relative)) return relative.string();
  // the data folder installed next to the program
  std::error_code ec;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed = program.parent_path() / INFERSCOPE_DATA_FROM_BIN / relative;
    if (std::filesystem::exists(installed)) return installed.lexically_normal().string();
  }
  return relative.string();  // reading it then names the path as given
}

}  // namespace inferscope
