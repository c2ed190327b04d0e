#include "core/cli/bench_windows.h"

#include "core/common/text_format.h"
#include "core/workload/serve_summary.h"

namespace inferscope::cli {
void print_decode_windows(std::ostream& out, const std::string& test, const std::vector<DecodeWindow>& windows,
                          double weight_bytes) {
  out << "\n" << test << " window by window (read bandwidth measured just before each of our repetitions; "
      << "decode roofline = bandwidth / weight bytes):\n"
      << "| window | read GB/s | roofline t/s | ours t/s | of roofline | llama.cpp t/s | of roofline | ours / llama.cpp |\n"
      << "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  std::vector<double> ratios;
  for (size_t i = 0; i < windows.size(); ++i) {
    const DecodeWindow& w = windows[i];
    const double roof = w.read_bytes_per_second / weight_bytes;
    ratios.push_back(w.ours_ts / w.llama_ts);
    out << "| " << i + 1 << " | " << format_fixed(w.read_bytes_per_second / 1e9, 2) << " | " << format_fixed(roof, 1) << " | "
        << format_fixed(w.ours_ts, 2) << " | " << format_fixed(100 * w.ours_ts / roof, 0) << "% | " << format_fixed(w.llama_ts, 2) << " | "
        << format_fixed(100 * w.llama_ts / roof, 0) << "% | " << format_fixed(ratios.back(), 3) << "x |\n";
  }
  out << "median ours / llama.cpp over the windows: " << format_fixed(quantile(ratios, 0.5), 3) << "x\n";
}

nlohmann::json decode_windows_json(const std::vector<DecodeWindow>& windows, double weight_bytes) {
  nlohmann::json arr = nlohmann::json::array();
  for (const DecodeWindow& w : windows) {
    arr.push_back({{"read_bytes_per_second", w.read_bytes_per_second},
                   {"roofline_ts", w.read_bytes_per_second / weight_bytes},
                   {"ts", w.ours_ts},
                   {"llama_cpp_ts", w.llama_ts},
                   {"ratio", w.ours_ts / w.llama_ts}});
  }
  return arr;
}

}  // namespace inferscope::cli
