// How serve-sim reports a run, local or remote: --metrics-json FILE gets the whole run (written
// atomically), --json prints the summary as JSON, otherwise the text summary.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>

#include "core/cli/args.h"

namespace inferscope::cli {

// `report(detailed)`: the run's JSON without "config" (detailed: with its timelines);
// `print_text(summary)`: the text form of the summary JSON (which holds "config").
void emit_serve_sim_report(const Args& args, const nlohmann::json& config, const std::function<nlohmann::json(bool)>& report,
                           const std::function<void(const nlohmann::json&)>& print_text);

}  // namespace inferscope::cli
