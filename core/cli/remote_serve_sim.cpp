#include "core/cli/remote_serve_sim.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>

#include "core/cli/endpoint_options.h"
#include "core/cli/serve_sim_report.h"
#include "core/common/text_format.h"
#include "core/engine/engine_metrics.h"
#include "core/workload/serve_summary.h"
#include "core/remote/server_report.h"
#include "core/gguf/gguf_file.h"
#include "core/tokenizer/tokenizer.h"

namespace inferscope::cli {
namespace {

using nlohmann::json;

json or_null(const std::optional<double>& v) { return v ? json(*v) : json(); }

// The token ids of each request, made as the local serve-sim makes them (same seed, same ids) from
// the served model's tokenizer, or pseudo-random ids over --vocab-size for a workload without text.
std::vector<RemoteWorkloadRequest> remote_requests(const Args& args, const Workload& workload) {
  std::unique_ptr<Tokenizer> tokenizer;
  int32_t vocab = 0;
  if (args.has("--tokenizer")) {
    tokenizer = Tokenizer::from_gguf(*GgufFile::open(args.str("--tokenizer", "")));
    vocab = tokenizer->vocab().size();
  } else if (args.has("--vocab-size")) {
    vocab = static_cast<int32_t>(args.integer("--vocab-size", 0, 1, 1 << 24));
  } else {
    throw UsageError("serve-sim --endpoint needs the served model's tokenizer (--tokenizer GGUF) or, for a workload "
                     "without text prompts, its vocabulary size (--vocab-size N)");
  }
  const Encoder encode = [&](std::string_view text, bool add_bos) -> std::vector<TokenId> {
    if (!tokenizer) throw UsageError("this workload has text prompts: give --tokenizer GGUF (the served model's)");
    return tokenizer->encode(text, add_bos);
  };
  std::vector<RemoteWorkloadRequest> out;
  for (const Request& r : materialize_workload(workload, encode, vocab, static_cast<uint64_t>(args.integer("--seed", 1, 0, INT64_MAX)))) {
    out.push_back({static_cast<int32_t>(r.id), r.arrival_s, std::vector<int32_t>(r.tokens.begin(), r.tokens.end()), r.max_output_tokens});
  }
  return out;
}

std::optional<double> peak(const std::vector<ServerSample>& samples, std::optional<double> ServerGauges::*field) {
  std::optional<double> best;
  for (const ServerSample& s : samples) {
    if (const auto& v = s.gauges.*field) best = std::max(best.value_or(*v), *v);
  }
  return best;
}

std::optional<double> average(const std::vector<ServerSample>& samples, std::optional<double> ServerGauges::*field) {
  double sum = 0;
  int n = 0;
  for (const ServerSample& s : samples) {
    if (const auto& v = s.gauges.*field) sum += *v, ++n;
  }
  return n > 0 ? std::optional(sum / n) : std::nullopt;
}

void print_text(const json& j, const json& config) {
  const auto show = [](const json& v, const char* unit = "") {
    if (v.is_null()) return std::string("n/a");
    return v.is_number_float() ? format_number(v.get<double>()) + unit : v.dump() + unit;
  };
  std::cout << "serve-sim: " << j["requests_total"] << " requests on " << config["server"].get<std::string>() << " at "
            << config["endpoint"].get<std::string>() << " (" << config["model"].get<std::string>() << "), concurrency "
            << (config["max_concurrency"].get<int>() > 0 ? std::to_string(config["max_concurrency"].get<int>()) : "unlimited") << "\n"
            << "  requests        finished " << j["requests_finished"] << ", failed " << j["requests_refused"] << " in "
            << show(j["steps"]) << " steps, " << show(j["duration_s"], " s") << "\n"
            << "  KV usage        peak " << show(j["kv_cache_usage_perc_peak"]) << ", mean " << show(j["kv_cache_usage_perc_mean"]) << "\n"
            << "  concurrency     max " << show(j["max_concurrent_requests"]) << ", mean " << show(j["num_requests_running_mean"])
            << ", preemptions " << show(j["num_preemptions"]) << "\n"
            << "  tokens          prefill " << show(j["prefill_tokens"]) << ", decode " << show(j["decode_tokens"]) << ", output "
            << show(j["output_tokens"]) << " -> " << show(j["tokens_per_second"]) << " output tokens/s\n"
            << "  TTFT            p50 " << show(j["time_to_first_token_seconds_p50"], " s") << ", p99 "
            << show(j["time_to_first_token_seconds_p99"], " s") << "\n"
            << "  e2e latency     p50 " << show(j["e2e_request_latency_seconds_p50"], " s") << ", p99 "
            << show(j["e2e_request_latency_seconds_p99"], " s") << "\n"
            << "  not reported    " << j["unavailable"].size() << " keys (n/a above; --json lists them)\n";
  for (const json& r : j["requests"]) {
    if (r.contains("error")) std::cout << "  failed          request " << r["id"] << ": " << r["error"].get<std::string>() << "\n";
  }
}

}  // namespace

std::vector<OptionSpec> remote_serve_sim_option_specs() {
  return {
      {"--tokenizer", "", true, "with --endpoint: a GGUF with the served model's tokenizer (tensors optional): prompt ids as the local run makes them"},
      {"--vocab-size", "", true, "with --endpoint, instead of --tokenizer: the served model's vocabulary (pseudo-random prompts only)"},
      {"--max-concurrency", "", true, "with --endpoint: requests in flight at most (default: no limit)"},
      {"--metrics-interval-ms", "", true, "with --endpoint: how often /metrics is scraped during the run (default 250)"},
  };
}

json remote_workload_json(const RemoteWorkloadResult& result, bool with_samples) {
  std::vector<double> ttft, e2e;
  int32_t finished = 0, failed = 0;
  std::optional<double> output_tokens = 0.0;
  json requests = json::array();
  for (const RemoteRequestResult& r : result.requests) {
    const RemoteReply& reply = r.reply;
    const double wait = r.sent_s - r.arrival_s;  // latencies count from arrival, as the local engine's do
    const bool ok = reply.outcome == RemoteOutcome::Finished;
    finished += ok ? 1 : 0;
    failed += reply.outcome == RemoteOutcome::Failed ? 1 : 0;
    if (ok && reply.timing.time_to_first_token_s >= 0) ttft.push_back(wait + reply.timing.time_to_first_token_s);
    if (ok) e2e.push_back(wait + reply.timing.e2e_s);
    if (ok) output_tokens = reply.usage && output_tokens ? std::optional(*output_tokens + reply.usage->completion_tokens) : std::nullopt;
    json entry = {{"id", r.id},
                  {"arrival_s", r.arrival_s},
                  {"client_wait_seconds", wait},
                  {"request_queue_time_seconds", nullptr},
                  {"time_to_first_token_seconds", reply.timing.time_to_first_token_s >= 0 ? json(wait + reply.timing.time_to_first_token_s) : json()},
                  {"inter_token_latency_seconds", reply.timing.chunk_gaps_s},
                  {"e2e_request_latency_seconds", wait + reply.timing.e2e_s},
                  {"prompt_tokens", reply.usage ? json(reply.usage->prompt_tokens) : json()},
                  {"generation_tokens", reply.usage ? json(reply.usage->completion_tokens) : json()},
                  {"num_preemptions", nullptr},
                  {"finish_reason", stop_reason_name(stop_reason_of(reply))},
                  {"spec_decode", nullptr},
                  {"server_timings", reply.timings ? json{{"prompt_ms", reply.timings->prompt_ms}, {"predicted_ms", reply.timings->predicted_ms}}
                                                   : json()},
                  {"text", reply.text}};
    if (!reply.error.empty()) entry["error"] = reply.error;
    requests.push_back(std::move(entry));
  }
  const std::optional<ServerCounters>& c = result.counters;
  const auto counter = [&](std::optional<double> ServerCounters::*field) { return c ? (*c).*field : std::optional<double>(); };
  const std::optional<double> queries = counter(&ServerCounters::prefix_cache_queries);
  const std::optional<double> hits = counter(&ServerCounters::prefix_cache_hits);
  json spec, acceptance_rate, acceptance_length;
  if (counter(&ServerCounters::spec_drafts)) {
    SpecDecodeCounters s;
    s.num_drafts = static_cast<int64_t>(*counter(&ServerCounters::spec_drafts));
    s.num_draft_tokens = static_cast<int64_t>(counter(&ServerCounters::spec_draft_tokens).value_or(0));
    s.num_accepted_tokens = static_cast<int64_t>(counter(&ServerCounters::spec_accepted_tokens).value_or(0));
    spec = spec_json(s);
    acceptance_rate = s.acceptance_rate();
    acceptance_length = s.mean_acceptance_length();
  }
  // What the server's run gives of each serve figure (core/workload/serve_summary.h); the figures it
  // cannot give (KV waste, FLOPs and bytes, weights, attention scratch) are null.
  const std::map<std::string, json> given = {
      {"requests_total", result.requests.size()},
      {"requests_finished", finished},
      {"requests_refused", failed},
      {"steps", or_null(counter(&ServerCounters::steps))},
      {"duration_s", result.duration_s},
      {"kv_cache_usage_perc_peak", or_null(peak(result.samples, &ServerGauges::kv_cache_usage))},
      {"kv_cache_usage_perc_mean", or_null(average(result.samples, &ServerGauges::kv_cache_usage))},
      {"max_concurrent_requests", or_null(peak(result.samples, &ServerGauges::requests_running))},
      {"num_requests_running_mean", or_null(average(result.samples, &ServerGauges::requests_running))},
      {"num_preemptions", or_null(counter(&ServerCounters::preemptions))},
      {"prefix_cache_queries", or_null(queries)},
      {"prefix_cache_hits", or_null(hits)},
      {"prefix_cache_hit_rate", queries && hits && *queries > 0 ? json(*hits / *queries) : json()},
      {"prefill_tokens", or_null(counter(&ServerCounters::prompt_tokens))},
      {"decode_tokens", or_null(counter(&ServerCounters::generation_tokens))},
      {"output_tokens", or_null(output_tokens)},
      {"spec_acceptance_rate", acceptance_rate},
      {"spec_mean_acceptance_length", acceptance_length},
      {"tokens_per_second", output_tokens && result.duration_s > 0 ? json(*output_tokens / result.duration_s) : json()},
      {"time_to_first_token_seconds_p50", ttft.empty() ? json() : json(quantile(ttft, 0.5))},
      {"time_to_first_token_seconds_p99", ttft.empty() ? json() : json(quantile(ttft, 0.99))},
      {"e2e_request_latency_seconds_p50", e2e.empty() ? json() : json(quantile(e2e, 0.5))},
      {"e2e_request_latency_seconds_p99", e2e.empty() ? json() : json(quantile(e2e, 0.99))},
  };
  json out = {{"spec_mode", nullptr}, {"spec_decode", spec}};
  size_t used = 0;
  for (const ServeFigure& f : serve_figures()) {
    const auto it = given.find(f.key);
    used += it != given.end() ? 1 : 0;
    out[f.key] = it == given.end() ? json() : it->second;
  }
  if (used != given.size()) throw std::logic_error("remote_workload_json: a figure given that serve_figures() lacks");
  json unavailable = json::array();
  for (const auto& [key, value] : out.items()) {
    if (value.is_null()) unavailable.push_back(key);
  }
  out["unavailable"] = unavailable;
  if (!result.metrics_error.empty()) out["metrics_error"] = result.metrics_error;
  out["requests"] = std::move(requests);
  if (with_samples) {
    json samples = json::array();
    for (const ServerSample& s : result.samples) {
      samples.push_back({{"time_s", s.time_s},
                         {"requests_running", or_null(s.gauges.requests_running)},
                         {"requests_waiting", or_null(s.gauges.requests_waiting)},
                         {"kv_cache_usage_perc", or_null(s.gauges.kv_cache_usage)}});
    }
    out["server_samples"] = std::move(samples);
  }
  return out;
}

int serve_sim_on_endpoint(const Args& args, const Workload& workload) {
  const ConnectedServer server = connect_endpoint(args);
  const std::vector<RemoteWorkloadRequest> requests = remote_requests(args, workload);
  RemoteWorkloadOptions options;
  options.sampling.ignore_eos = !args.has("--stop-at-eos");  // greedy; each request runs to its output_tokens
  options.max_concurrency = static_cast<int32_t>(args.integer("--max-concurrency", 0, 0, 1 << 16));
  options.metrics_interval_s = static_cast<double>(args.integer("--metrics-interval-ms", 250, 10, 600000)) / 1000;
  const RemoteWorkloadResult result = run_remote_workload(server.endpoint, server.info.kind, requests, options);

  const json config = {{"endpoint", server.endpoint.base_url},
                       {"server", server_kind_name(server.info.kind)},
                       {"model", server.endpoint.model},
                       {"max_concurrency", options.max_concurrency},
                       {"server_slots", server.info.slot_count ? json(*server.info.slot_count) : json()},
                       {"server_context_length", server.info.context_length ? json(*server.info.context_length) : json()}};
  emit_serve_sim_report(
      args, config, [&](bool detailed) { return remote_workload_json(result, detailed); },
      [&](const json& summary) { print_text(summary, config); });
  return 0;
}

}  // namespace inferscope::cli
