// inferscope-cli serve-sim --endpoint: the workload replayed against a server, reported with the
// local serve-sim's JSON keys; what the server cannot report is null and listed under "unavailable".
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "core/cli/args.h"
#include "core/remote/remote_workload.h"
#include "core/remote/server_probe.h"
#include "core/workload/workload.h"

namespace inferscope::cli {

// --tokenizer, --vocab-size, --max-concurrency, --metrics-interval-ms
std::vector<OptionSpec> remote_serve_sim_option_specs();

// Runs `workload` on the server --endpoint names and prints the text summary or (--json) the JSON;
// --metrics-json FILE gets the JSON with every request and the gauges scraped during the run.
int serve_sim_on_endpoint(const Args& args, const Workload& workload);

// The summary (every serve figure's key, as summary_json writes them), "requests" and "unavailable";
// with_samples adds "server_samples" (the gauges over time).
nlohmann::json remote_workload_json(const RemoteWorkloadResult& result, bool with_samples);

}  // namespace inferscope::cli
