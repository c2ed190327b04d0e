#include "core/cli/serve_sim_report.h"

#include <iostream>

#include "core/common/atomic_file.h"

namespace inferscope::cli {

void emit_serve_sim_report(const Args& args, const nlohmann::json& config, const std::function<nlohmann::json(bool)>& report,
                           const std::function<void(const nlohmann::json&)>& print_text) {
  nlohmann::json out = report(false);
  out["config"] = config;
  if (args.has("--metrics-json")) {
    nlohmann::json timeline = report(true);
    timeline["config"] = config;
    write_file_atomically(args.str("--metrics-json", ""), timeline.dump(2) + "\n");
  }
  if (args.has("--json")) {
    std::cout << out.dump(2) << "\n";
  } else {
    print_text(out);
  }
}

}  // namespace inferscope::cli
