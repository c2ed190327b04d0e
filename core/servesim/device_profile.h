// The device a dry run (serve-sim --dry-run) prices its steps on, as data (resources/devices/NAME.json):
//   {"name": "NVIDIA H200 SXM (141 GB)", "kind": "roofline", "memory_bandwidth_gb_s": 4800,
//    "peak_tflops": 989, "step_overhead_us": 20, "memory_gib": 131.3, "link": "NVLink 4",
//    "link_bandwidth_gb_s": 450, "link_latency_us": 8, "sources": ["..."]}
//   {"name": "...", "kind": "linear", "step_fixed_ms": 5, "step_per_token_ms": 3, "sources": ["..."]}
// A roofline device takes max(bytes read / bandwidth, FLOPs / peak) + the overhead for a step: a
// decode step is bound by reading the weights, so it costs about the same for 1 or 64 sequences. A
// linear one takes fixed + per token x tokens (a CPU whose every token adds its matmul work). The
// optional link (all three fields together) prices tensor parallelism's all-reduces.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/servesim/dry_run_executor.h"

namespace inferscope {

struct DeviceProfile {
  std::string name;
  std::optional<DryRunCost> linear;       // kind "linear"
  std::optional<RooflineDevice> roofline;  // kind "roofline"
  double memory_bytes = 0;                 // the device's memory (0: not given)
  std::string link_name;                   // the link to its peers for tensor parallelism ("" : none given)
  std::optional<DeviceLink> link;          // per direction; set with link_name
  std::vector<std::string> sources;        // where each figure comes from
};

// The profile in `path`. Throws std::runtime_error naming the file and the field for a missing,
// mistyped or non-positive value, or an unknown kind.
DeviceProfile read_device_profile(const std::string& path);
// The profile in `j`, the JSON object of the file `path` (named in errors as read_device_profile's).
DeviceProfile device_profile_from_json(const nlohmann::json& j, const std::string& path);

// `name_or_path` as a file: a path as given when it names a .json file, else resources/devices/NAME.json
// under the working directory or, failing that, under the data folder installed next to the program
// (../share/inferscope).
std::string device_profile_path(const std::string& name_or_path);

}  // namespace inferscope
