// bench --compare-llama-bench with --bandwidth: the memory read bandwidth measured right before each
// of our decode repetitions, so that each pair (ours, then llama-bench's) stands against the roofline
// of its own window. On a shared machine the bandwidth left to one guest swings within minutes (here
// 37 to 66 GB/s): where it is low, both engines sit near the same roof and no ratio can be large.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace inferscope::cli {

struct DecodeWindow {
  double read_bytes_per_second = 0;  // measured just before our repetition
  double ours_ts = 0;
  double llama_ts = 0;  // llama-bench's repetition right after ours
};

// One row per window: the bandwidth, the decode roofline it implies for `weight_bytes` per token, each
// engine's tokens/s and fraction of that roofline, and the ratio; then the median ratio.
void print_decode_windows(std::ostream& out, const std::string& test, const std::vector<DecodeWindow>& windows,
                          double weight_bytes);
nlohmann::json decode_windows_json(const std::vector<DecodeWindow>& windows, double weight_bytes);

}  // namespace inferscope::cli
