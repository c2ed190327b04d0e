#include "core/cli/bench_roofline.h"

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/common/text_format.h"

namespace inferscope::cli {

std::vector<RooflineRow> roofline_rows(const std::vector<RooflineTest>& tests, const StepCostModel& model, int32_t chunk,
                                       const PeakFlopsResult& peak, const BandwidthResult& bandwidth) {
  std::vector<RooflineRow> rows;
  for (const RooflineTest& t : tests) {
    RooflineRow r;
    r.test = t.test;
    const auto tokens = static_cast<int32_t>(t.n_prompt > 0 ? t.n_prompt : t.n_gen);
    r.cost = t.n_prompt > 0 ? model.prefill(tokens, chunk > 0 ? chunk : tokens) : model.decode(tokens);
    r.seconds = t.tokens_per_second > 0 ? tokens / t.tokens_per_second : 0;
    r.achieved_flops = r.seconds > 0 ? r.cost.flops() / r.seconds : 0;
    r.attainable_flops = std::min(peak.flops_per_second, bandwidth.read_bytes_per_second * r.cost.intensity());
    rows.push_back(r);
  }
  return rows;
}

nlohmann::json roofline_json(const RooflineRow& r, const PeakFlopsResult& peak, const BandwidthResult& bandwidth) {
  return {{"test", "roofline_" + r.test},
          {"flops", r.cost.flops()},
          {"matmul_flops", r.cost.matmul_flops},
          {"attention_flops", r.cost.attention_flops},
          {"weight_bytes_read", r.cost.weight_bytes},
          {"kv_bytes_read", r.cost.kv_bytes},
          {"intensity_flops_per_byte", r.cost.intensity()},
          {"achieved_flops_per_second", r.achieved_flops},
          {"attainable_flops_per_second", r.attainable_flops},
          {"peak_flops_per_second", peak.flops_per_second},
          {"peak_kernel", peak.kernel},
          {"read_bytes_per_second", bandwidth.read_bytes_per_second},
          {"n_threads", peak.threads}};
}

void print_roofline(const std::vector<RooflineRow>& rows, const PeakFlopsResult& peak, const BandwidthResult& bandwidth) {
  const double ridge = peak.flops_per_second / bandwidth.read_bytes_per_second;
  std::cout << "\nroofline: peak " << format_number(peak.flops_per_second / 1e9, "%.1f") << " GFLOP/s (" << peak.kernel
            << ", " << peak.threads << " threads), read bandwidth " << format_number(bandwidth.read_bytes_per_second / 1e9, "%.1f")
            << " GB/s, ridge at " << format_number(ridge, "%.1f") << " FLOP/byte\n"
            << "| test | GFLOP | GB read | FLOP/byte | bound by | achieved GFLOP/s | roofline GFLOP/s | of roofline |\n"
            << "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |\n";
  for (const RooflineRow& r : rows) {
    std::cout << "| " << r.test << " | " << format_number(r.cost.flops() / 1e9, "%.2f") << " | "
              << format_number(r.cost.bytes() / 1e9, "%.3f") << " | " << format_number(r.cost.intensity(), "%.1f") << " | "
              << (r.cost.intensity() < ridge ? "memory" : "compute") << " | " << format_number(r.achieved_flops / 1e9, "%.1f")
              << " | " << format_number(r.attainable_flops / 1e9, "%.1f") << " | "
              << format_number(100.0 * r.achieved_flops / std::max(r.attainable_flops, 1.0), "%.0f") << "% |\n";
  }
}

}  // namespace inferscope::cli
