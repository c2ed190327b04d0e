#include "core/cli/remote_serve_sim.h"

#include <climits>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/cli/endpoint_options.h"
#include "core/gguf/gguf_file.h"
#include "core/remote/workload_target.h"
#include "core/tokenizer/tokenizer.h"

namespace inferscope::cli {
namespace {

using nlohmann::json;

// The token ids of each request, made as the local serve-sim makes them (same seed, same ids) from
// the served model's tokenizer, or pseudo-random ids over --vocab-size for a workload without text.
std::vector<Request> remote_requests(const Args& args, const Workload& workload) {
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
  return materialize_workload(workload, encode, vocab, static_cast<uint64_t>(args.integer("--seed", 1, 0, INT64_MAX)));
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

ServeSimRun serve_sim_on_endpoint(const Args& args, const Workload& workload) {
  const ConnectedServer server = connect_endpoint(args);
  const std::vector<Request> requests = remote_requests(args, workload);
  ServerWorkload target{server.endpoint, server.info};
  target.max_concurrency = static_cast<int32_t>(args.integer("--max-concurrency", 0, 0, 1 << 16));
  target.metrics_interval_s = static_cast<double>(args.integer("--metrics-interval-ms", 250, 10, 600000)) / 1000;
  WorkloadRunOptions options;
  options.sampling.ignore_eos = !args.has("--stop-at-eos");  // greedy; each request runs to its output_tokens
  WorkloadResult result = run_workload_on(target, requests, options);

  json config = {{"endpoint", server.endpoint.base_url},
                 {"server", server_kind_name(server.info.kind)},
                 {"model", server.endpoint.model},
                 {"max_concurrency", target.max_concurrency},
                 {"server_slots", server.info.slot_count ? json(*server.info.slot_count) : json()},
                 {"server_context_length", server.info.context_length ? json(*server.info.context_length) : json()}};
  std::vector<std::string> header = {
      "serve-sim: " + std::to_string(requests.size()) + " requests on " + std::string(server_kind_name(server.info.kind)) + " at " +
      server.endpoint.base_url + " (" + server.endpoint.model + "), concurrency " +
      (target.max_concurrency > 0 ? std::to_string(target.max_concurrency) : "unlimited")};
  return {std::move(result), std::move(config), std::move(header)};
}

}  // namespace inferscope::cli
