// How serve-sim reports a run, on the local engine or on a server: both are a WorkloadResult, written
// by workload_json alike (a figure the run did not measure is null there, and "n/a" in the text).
// --metrics-json FILE gets the whole run (every request and step, written atomically), --json prints
// the summary as JSON, otherwise the text summary.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/cli/args.h"
#include "core/workload/workload_runner.h"

namespace inferscope::cli {

struct ServeSimRun {
  WorkloadResult result;
  nlohmann::json config;            // the report's "config": the engine's resolved settings, or the server's
  std::vector<std::string> header;  // the text summary's first lines: what ran, where, on what
};

void emit_serve_sim_report(const Args& args, const ServeSimRun& run);

}  // namespace inferscope::cli
