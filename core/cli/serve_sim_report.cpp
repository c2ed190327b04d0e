#include "core/cli/serve_sim_report.h"

#include <iostream>

#include "core/common/atomic_file.h"
#include "core/common/text_format.h"
#include "core/spec/spec_config.h"

namespace inferscope::cli {
namespace {

using nlohmann::json;

// A summary value as text: "n/a" where the run did not measure it.
std::string shown(const json& v, const char* format = "%.3f", const char* unit = "") {
  if (v.is_null()) return "n/a";
  return (v.is_number_float() ? format_number(v.get<double>(), format) : v.dump()) + unit;
}

std::string percent(const json& fraction) { return fraction.is_null() ? "n/a" : format_number(100 * fraction.get<double>(), "%.1f") + "%"; }

// Billions of `v`, or "n/a".
std::string giga(const json& v, const char* format) { return v.is_null() ? "n/a" : format_number(v.get<double>() / 1e9, format); }

void print_text(const json& s, const ServeSimRun& run) {
  const bool on_server = !run.result.metrics.source.empty();
  const char* failed = on_server ? "failed" : "refused";
  for (const std::string& line : run.header) std::cout << line << "\n";
  std::cout << "  requests        finished " << s["requests_finished"] << ", " << failed << " " << s["requests_refused"] << " in "
            << shown(s["steps"], "%.0f") << " steps, " << shown(s["duration_s"], "%.3f", " s") << "\n"
            << "  KV usage        peak " << percent(s["kv_cache_usage_perc_peak"]) << ", mean "
            << percent(s["kv_cache_usage_perc_mean"]) << "\n"
            << "  KV waste        internal fragmentation " << percent(s["kv_internal_fragmentation_perc_mean"])
            << ", reserved but unused " << percent(s["kv_reserved_unused_perc_mean"]) << " (means)\n"
            << "  concurrency     max " << shown(s["max_concurrent_requests"], "%.0f") << ", mean "
            << shown(s["num_requests_running_mean"], "%.1f") << ", preemptions " << shown(s["num_preemptions"], "%.0f") << "\n"
            << "  prefix cache    hit rate " << percent(s["prefix_cache_hit_rate"]) << " (" << shown(s["prefix_cache_hits"], "%.0f")
            << " of " << shown(s["prefix_cache_queries"], "%.0f") << " prompt tokens)\n"
            << "  tokens          prefill " << shown(s["prefill_tokens"], "%.0f") << ", decode " << shown(s["decode_tokens"], "%.0f")
            << ", output " << shown(s["output_tokens"], "%.0f") << " -> " << shown(s["tokens_per_second"], "%.1f")
            << " output tokens/s\n";
  if (!s["flops"].is_null()) {
    const double bytes = s["bytes_read"].get<double>();
    std::cout << "  work            " << giga(s["flops"], "%.1f") << " GFLOP, " << giga(s["bytes_read"], "%.2f") << " GB read ("
              << format_number(s["flops"].get<double>() / std::max(bytes, 1.0), "%.1f") << " FLOP/byte) -> "
              << giga(s["flops_per_second"], "%.1f") << " GFLOP/s in steps\n";
  }
  std::cout << "  TTFT            p50 " << shown(s["time_to_first_token_seconds_p50"], "%.3f", " s") << ", p99 "
            << shown(s["time_to_first_token_seconds_p99"], "%.3f", " s") << "\n"
            << "  e2e latency     p50 " << shown(s["e2e_request_latency_seconds_p50"], "%.3f", " s") << ", p99 "
            << shown(s["e2e_request_latency_seconds_p99"], "%.3f", " s") << "\n";
  const SpecDecodeCounters& spec = run.result.summary.spec;
  if (spec.num_drafts > 0) {
    std::cout << "  speculation     " << (on_server ? std::string("on the server") : describe_spec(run.result.config.spec))
              << ": acceptance " << percent(s["spec_acceptance_rate"]) << ", mean acceptance length "
              << shown(s["spec_mean_acceptance_length"], "%.2f") << " (" << spec.num_accepted_tokens << " of "
              << spec.num_draft_tokens << " draft tokens)\n";
  }
  if (!s["unavailable"].empty()) {
    std::cout << "  not reported    " << s["unavailable"].size() << " figures (n/a above; --json lists them)\n";
  }
  if (s.contains("metrics_error")) std::cout << "  /metrics        " << s["metrics_error"].get<std::string>() << "\n";
  std::string label = failed;
  label.resize(16, ' ');  // the column the other lines' values start in
  for (const WorkloadOutput& r : run.result.outputs) {
    if (!r.error.empty()) std::cout << "  " << label << "request " << r.id << ": " << r.error << "\n";
  }
}

}  // namespace

void emit_serve_sim_report(const Args& args, const ServeSimRun& run) {
  json out = workload_json(run.result, false);
  out["config"] = run.config;
  if (args.has("--metrics-json")) {
    json timeline = workload_json(run.result, true);
    timeline["config"] = run.config;
    write_file_atomically(args.str("--metrics-json", ""), timeline.dump(2) + "\n");
  }
  if (args.has("--json")) {
    std::cout << out.dump(2) << "\n";
  } else {
    print_text(out, run);
  }
}

}  // namespace inferscope::cli
