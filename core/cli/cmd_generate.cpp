// inferscope-cli generate: stream a completion of a prompt or a chat message, run by the engine
// (one request on a SyncEngine: the scheduler, KV cache and executor every front end uses).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/cli/commands.h"
#include "core/cli/endpoint_options.h"
#include "core/cli/model_options.h"
#include "core/cli/remote_generate.h"
#include "core/cli/sampling_options.h"
#include "core/engine/prompt.h"
#include "core/engine/sync_engine.h"
#include "core/sample/logprobs.h"

namespace inferscope::cli {
namespace {

// A log-probability as %.9g prints it: nine significant digits name a float exactly, so equal
// floats print equal and different ones differently (JSON keeps the shortest form of that value).
double printed(double logprob) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(static_cast<float>(logprob)));
  return std::strtod(buf, nullptr);
}

nlohmann::json logprob_entry(const Tokenizer& tokenizer, TokenId id, double logprob) {
  return {{"token", tokenizer.token_to_piece(id)}, {"id", id}, {"logprob", printed(logprob)}};
}

// OpenAI's logprobs.content: each generated token's log-probability and its top_k alternatives,
// from the model's raw logits (before penalties, temperature and filters).
nlohmann::json logprobs_json(const Tokenizer& tokenizer, const std::vector<std::vector<float>>& rows,
                             const std::vector<TokenId>& tokens, int32_t top_k) {
  nlohmann::json content = nlohmann::json::array();
  for (size_t i = 0; i < tokens.size() && i < rows.size(); ++i) {
    nlohmann::json entry = logprob_entry(tokenizer, tokens[i], log_probability(rows[i], tokens[i]));
    entry["top_logprobs"] = nlohmann::json::array();
    for (const TokenLogprob& t : top_logprobs(rows[i], top_k)) {
      entry["top_logprobs"].push_back(logprob_entry(tokenizer, t.id, t.logprob));
    }
    content.push_back(std::move(entry));
  }
  return {{"content", content}};
}

}  // namespace

int cmd_generate(int argc, char** argv) {
  std::vector<OptionSpec> specs = with_model_options({
      {"--prompt", "-p", true, "text to continue (\"\" = start from BOS)"},
      {"--chat", "", true, "a user message, rendered with the model's chat template"},
      {"--system", "", true, "system prompt for --chat (default: the template's own, if any)"},
      {"--n-predict", "-n", true, "tokens to generate at most (default 256; -1: until EOS or the context ends)"},
      {"--json", "", false, "print one JSON object (text, tokens, metrics) instead of streaming"},
      {"--logprobs", "", true,
       "with --json: each generated token's log-probability and its K most likely alternatives (0-20), from the raw logits"},
  });
  for (OptionSpec& s : sampling_option_specs()) specs.push_back(s);
  for (OptionSpec& s : endpoint_option_specs()) specs.push_back(s);
  if (print_help_if_asked("generate (--model PATH | --endpoint URL) (--prompt TEXT | --chat TEXT [--system TEXT]) [options]",
                          specs, argc, argv)) {
    return 0;
  }
  const Args args(specs, argc, argv, 2);
  if (args.has("--prompt") == args.has("--chat")) throw UsageError("give exactly one of --prompt and --chat");
  if (args.has("--system") && !args.has("--chat")) throw UsageError("--system needs --chat");
  if (args.has("--logprobs") && !args.has("--json")) throw UsageError("--logprobs needs --json");
  if (args.has("--endpoint")) {
    refuse_local_options(args, option_names(model_option_specs()));
    if (args.has("--logprobs")) throw UsageError("--logprobs runs on the local engine only");
    return generate_on_endpoint(args);
  }
  for (const char* remote_only : {"--api-key", "--served-model"}) {
    if (args.has(remote_only)) throw UsageError(std::string(remote_only) + " needs --endpoint");
  }
  const int64_t n_predict = args.integer("--n-predict", 256, -1, 1 << 30);
  const int32_t top_k = static_cast<int32_t>(args.integer("--logprobs", 0, 0, 20));
  const bool json = args.has("--json");
  const SamplingParams sampling = sampling_params(args);
  const EngineConfig config = engine_config(args);

  auto model = load_model(args);
  EngineCoreOptions core_options;
  core_options.conversion_progress = conversion_progress_printer(config.quant);
  SyncEngine engine(*model, config, core_options);
  EngineRequest request;
  if (args.has("--prompt")) {
    request.prompt_tokens = encode_prompt(*model, args.str("--prompt", ""));
  } else {
    std::vector<ChatMessage> messages;
    if (args.has("--system")) messages.push_back({"system", args.str("--system", "")});
    messages.push_back({"user", args.str("--chat", "")});
    request.prompt_tokens = encode_chat(*model, messages);
  }
  request.sampling = sampling;
  // Output tokens the context leaves room for (the last sampled token is never fed back).
  const int64_t room = engine.core().limit().max_kv_tokens - static_cast<int64_t>(request.prompt_tokens.size()) + 1;
  const bool context_bound = n_predict < 0 || n_predict > room;
  request.max_tokens = static_cast<int32_t>(context_bound ? std::max<int64_t>(room, 0) : n_predict);
  if (args.has("--logprobs")) request.logits = LogitsOutput::Sampled;

  std::vector<std::vector<float>> rows;  // the logits each output token was sampled from
  const int32_t prompt_tokens = static_cast<int32_t>(request.prompt_tokens.size());
  const RequestOutcome r = engine.run(
      std::move(request),
      [&](std::string_view text) {
        if (!json) std::cout << text << std::flush;
      },
      [&](RequestId, int32_t, std::span<const float> logits) { rows.emplace_back(logits.begin(), logits.end()); });
  if (r.reason == StopReason::Failed) throw std::runtime_error(r.error);
  const bool context_full = context_bound && r.reason == StopReason::Length;
  if (context_full) {
    std::cerr << "\n[stopped: the context length of " << engine.config().context_length << " tokens is reached]\n";
  }
  if (json) {
    const RequestMetrics& m = r.metrics;
    const double decode_s = m.e2e_request_latency_seconds - m.time_to_first_token_seconds;
    nlohmann::json out;
    out["text"] = r.text;
    out["tokens"] = r.tokens;
    out["prompt_tokens"] = prompt_tokens;
    out["finish_reason"] = context_full ? "context" : stop_reason_name(r.reason);
    out["metrics"] = {
        {"time_to_first_token_seconds", m.time_to_first_token_seconds},
        {"prefill_tokens_per_second", m.time_to_first_token_seconds > 0 ? prompt_tokens / m.time_to_first_token_seconds : 0},
        {"decode_tokens_per_second",
         r.tokens.size() > 1 && decode_s > 0 ? static_cast<double>(r.tokens.size() - 1) / decode_s : 0}};
    if (config.spec.enabled()) {
      out["metrics"]["spec_mode"] = spec_mode_name(config.spec.mode);
      out["metrics"]["spec_decode"] = spec_json(m.spec);
    }
    if (args.has("--logprobs")) out["logprobs"] = logprobs_json(model->tokenizer(), rows, r.tokens, top_k);
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << "\n";
  }
  return 0;
}

}  // namespace inferscope::cli
