// inferscope-cli serve-sim --endpoint: the workload replayed against a server, its prompts made as the
// local run makes them, and reported as a local run is (serve_sim_report.h).
#pragma once
#include <vector>

#include "core/cli/args.h"
#include "core/cli/serve_sim_report.h"
#include "core/workload/workload.h"

namespace inferscope::cli {

// --tokenizer, --vocab-size, --max-concurrency, --metrics-interval-ms
std::vector<OptionSpec> remote_serve_sim_option_specs();

// Runs `workload` on the server --endpoint names: each request's token ids as a streamed
// /v1/completions at its arrival time, the server's /metrics scraped before, during and after.
ServeSimRun serve_sim_on_endpoint(const Args& args, const Workload& workload);

}  // namespace inferscope::cli
